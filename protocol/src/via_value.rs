//! Code size: serde's derived `Deserialize` is generic over the deserializer, so a large enum
//! read from a JSON string, from a `serde_json::Value` and from inside an internally tagged
//! parent is compiled three times over (the action catalog's decoder is ~60 KB of wasm each
//! time). `via_json_value!` gives a type one decoder: every deserializer first reads a
//! `serde_json::Value` (whose decoder the worker has anyway), then the derived code runs on that
//! value alone; writing one goes through a `Value` the same way (the workspace's `serde_json`
//! keeps the fields' order). The type derives with `#[serde(remote = "Self")]`, which turns the
//! derived `serialize`/`deserialize` into inherent functions that the trait impls here call.

/// Implements `Serialize` and `Deserialize` for a type deriving both with
/// `#[serde(remote = "Self")]`, encoding and decoding through one `serde_json::Value`.
macro_rules! via_json_value {
    ($ty:ty) => {
        impl<'de> serde::Deserialize<'de> for $ty {
            fn deserialize<D: serde::Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
                let value = <serde_json::Value as serde::Deserialize>::deserialize(deserializer)?;
                <$ty>::deserialize(value).map_err(serde::de::Error::custom)
            }
        }
        impl serde::Serialize for $ty {
            fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
                let value = <$ty>::serialize(self, serde_json::value::Serializer)
                    .map_err(serde::ser::Error::custom)?;
                serde::Serialize::serialize(&value, serializer)
            }
        }
    };
}

/// Like [`via_json_value!`], for an enum written `{"<tag>": variant, "<content>": fields}` (as
/// `#[serde(tag, content)]` does) whose derive is externally tagged (`{variant: fields}`): serde's
/// adjacently tagged decoder reads the fields twice over — from the value, and from its buffer
/// for when they come before the tag — which for the action catalog doubled ~60 KB of wasm. The
/// type keeps `#[ts(tag, content)]` for its TypeScript.
macro_rules! via_json_value_adjacent {
    ($ty:ty, $tag:literal, $content:literal) => {
        impl<'de> serde::Deserialize<'de> for $ty {
            fn deserialize<D: serde::Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
                use serde::de::Error;
                let value = <serde_json::Value as serde::Deserialize>::deserialize(deserializer)?;
                let serde_json::Value::Object(mut fields) = value else {
                    return Err(D::Error::custom(format!(
                        "expected an object with `{}` and `{}`",
                        $tag, $content
                    )));
                };
                let variant = match fields.remove($tag) {
                    Some(serde_json::Value::String(variant)) => variant,
                    Some(_) => {
                        return Err(D::Error::custom(format!("`{}` must be a string", $tag)))
                    }
                    None => return Err(D::Error::missing_field($tag)),
                };
                let content = fields
                    .remove($content)
                    .ok_or_else(|| D::Error::missing_field($content))?;
                let external =
                    serde_json::Value::Object(std::iter::once((variant, content)).collect());
                <$ty>::deserialize(external).map_err(D::Error::custom)
            }
        }
        impl serde::Serialize for $ty {
            fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
                use serde::ser::Error;
                let external = <$ty>::serialize(self, serde_json::value::Serializer)
                    .map_err(S::Error::custom)?;
                let Some((variant, content)) = external.as_object().and_then(|o| o.iter().next())
                else {
                    return Err(S::Error::custom("a variant without fields"));
                };
                let mut map = serde::Serializer::serialize_map(serializer, Some(2))?;
                serde::ser::SerializeMap::serialize_entry(&mut map, $tag, variant)?;
                serde::ser::SerializeMap::serialize_entry(&mut map, $content, content)?;
                serde::ser::SerializeMap::end(map)
            }
        }
    };
}

/// Like [`via_json_value!`], for an enum written `{"<tag>": variant, …its fields}` (as
/// `#[serde(tag)]` does) whose derive is externally tagged (`{variant: {…its fields}}`): serde's
/// internally tagged decoder reads every variant's fields from its own buffer, a copy of each
/// field type's decoder besides the one reading a `Value`. Every variant has fields (`{}` at
/// least). The type keeps `#[ts(tag)]` for its TypeScript.
macro_rules! via_json_value_internal {
    ($ty:ty, $tag:literal) => {
        impl<'de> serde::Deserialize<'de> for $ty {
            fn deserialize<D: serde::Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
                use serde::de::Error;
                let value = <serde_json::Value as serde::Deserialize>::deserialize(deserializer)?;
                let serde_json::Value::Object(mut fields) = value else {
                    return Err(D::Error::custom(format!(
                        "expected an object with `{}`",
                        $tag
                    )));
                };
                let variant = match fields.remove($tag) {
                    Some(serde_json::Value::String(variant)) => variant,
                    Some(_) => {
                        return Err(D::Error::custom(format!("`{}` must be a string", $tag)))
                    }
                    None => return Err(D::Error::missing_field($tag)),
                };
                let external = serde_json::Value::Object(
                    std::iter::once((variant, serde_json::Value::Object(fields))).collect(),
                );
                <$ty>::deserialize(external).map_err(D::Error::custom)
            }
        }
        impl serde::Serialize for $ty {
            fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
                use serde::ser::{Error, SerializeMap};
                let external = <$ty>::serialize(self, serde_json::value::Serializer)
                    .map_err(S::Error::custom)?;
                let Some((variant, serde_json::Value::Object(fields))) =
                    external.as_object().and_then(|o| o.iter().next())
                else {
                    return Err(S::Error::custom("a variant without fields"));
                };
                let mut map = serializer.serialize_map(Some(1 + fields.len()))?;
                map.serialize_entry($tag, variant)?;
                for (key, value) in fields {
                    map.serialize_entry(key, value)?;
                }
                map.end()
            }
        }
    };
}
