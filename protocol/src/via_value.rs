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
