//! Property tests of signed URLs, artifact keys and artifact ids.
//!
//! - A URL we sign is accepted at any time before its expiry, for exactly what it grants.
//! - A URL changed in any way is refused, or grants exactly the same thing (a change that means
//!   nothing, such as another spelling of the same query); a change to anything signed (the
//!   method, the artifact, the kind, the expiry, the content type, the size limit, the
//!   signature, the key) is always refused, and with the right status.
//! - Ids and keys read back as written; no string, however odd, is accepted as an id or a key
//!   that lies outside its task's prefix.
//!
//! The test names start with the `make fuzz` target that runs them longer: `signed_urls`,
//! `artifact_keys`.

use mimo_proptest::{apply_to_str, cases, json_value, text, text_edits, Edit};
use mimo_r2_artifacts::*;
use proptest::collection::vec;
use proptest::prelude::*;
use proptest::sample::{select, Index};
use serde_json::{json, Value};

const SECRET: &[u8] = b"the deployment secret of the fuzz tests";

fn signing_key() -> [u8; 32] {
    derive_signing_key(SECRET)
}

fn task_id() -> impl Strategy<Value = TaskId> {
    "[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}"
        .prop_map(|s| TaskId::parse(&s).expect("a canonical UUID"))
}

fn artifact_id() -> impl Strategy<Value = ArtifactId> {
    (task_id(), any::<[u8; 16]>()).prop_map(|(task, random)| ArtifactId::new(&task, random))
}

fn kind() -> impl Strategy<Value = ArtifactKind> {
    select(ArtifactKind::ALL.to_vec())
}

/// A content type as granted: an allowed one, with parameters or not, or any text at all
/// (signing takes it as it is).
fn content_type() -> impl Strategy<Value = String> {
    let allowed: Vec<&str> = ArtifactKind::ALL
        .iter()
        .flat_map(|k| k.allowed_media_types().iter().copied())
        .collect();
    prop_oneof![
        select(allowed.clone()).prop_map(str::to_owned),
        select(allowed).prop_map(|t| format!("{t}; charset=utf-8")),
        text(),
    ]
}

// ---------------------------------------------------------------------------------------------
// Signed requests and their mutations
// ---------------------------------------------------------------------------------------------

/// A request to a URL we signed, presented before its expiry, and the key that verifies it.
#[derive(Debug, Clone)]
struct Request {
    grant: Grant,
    method: String,
    path: String,
    query: String,
    now_ms: u64,
    key: [u8; 32],
}

impl Request {
    /// The parameters as signed, decoded, in the order of the query.
    fn params(&self) -> Vec<(&'static str, String)> {
        match &self.grant {
            Grant::Upload(g) => vec![
                ("kind", g.kind.as_str().to_owned()),
                ("expires", g.expires_at_ms.to_string()),
                ("ct", g.content_type.clone()),
                ("max", g.max_length.to_string()),
                ("sig", sign_upload(&self.key, g)),
            ],
            Grant::Download(g) => vec![
                ("kind", g.kind.as_str().to_owned()),
                ("expires", g.expires_at_ms.to_string()),
                ("sig", sign_download(&self.key, g)),
            ],
        }
    }

    fn expires_at_ms(&self) -> u64 {
        match &self.grant {
            Grant::Upload(g) => g.expires_at_ms,
            Grant::Download(g) => g.expires_at_ms,
        }
    }

    fn authorize(&self) -> Result<Grant, Error> {
        authorize(
            &self.key,
            &self.method,
            &self.path,
            &self.query,
            self.now_ms,
        )
    }
}

fn request() -> impl Strategy<Value = Request> {
    (
        (artifact_id(), kind(), content_type()),
        (any::<u64>(), 1..=u64::MAX, any::<u64>()),
        any::<bool>(),
    )
        .prop_map(
            |((artifact_id, kind, content_type), (max_length, expires_at_ms, now), upload)| {
                let key = signing_key();
                let (grant, method, url) = if upload {
                    let grant = UploadGrant {
                        artifact_id,
                        kind,
                        content_type,
                        max_length,
                        expires_at_ms,
                    };
                    let url = upload_path(&key, &grant);
                    (Grant::Upload(grant), "PUT", url)
                } else {
                    let grant = DownloadGrant {
                        artifact_id,
                        kind,
                        expires_at_ms,
                    };
                    let url = download_path(&key, &grant);
                    (Grant::Download(grant), "GET", url)
                };
                let (path, query) = url.split_once('?').expect("a signed URL has a query");
                Request {
                    grant,
                    method: method.to_owned(),
                    path: path.to_owned(),
                    query: query.to_owned(),
                    now_ms: now % expires_at_ms,
                    key,
                }
            },
        )
}

/// A new value for a parameter, chosen relative to the one signed where that makes a near miss.
#[derive(Debug, Clone)]
enum NewValue {
    Any(String),
    /// A number: the signed one plus this (expiry and size limit), or this number itself.
    Offset(i64),
    /// One character of the signed value replaced (the signature: a single hex digit off).
    Char(Index, char),
    /// The signed value in upper case (kind, content type, signature).
    Upper,
}

/// Byte-for-byte percent-encoding of everything but letters and digits: another spelling than
/// the signer's, which verification must read the same.
fn encode(value: &str) -> String {
    value
        .bytes()
        .map(|b| match b {
            b'a'..=b'z' | b'A'..=b'Z' | b'0'..=b'9' => char::from(b).to_string(),
            _ => format!("%{b:02X}"),
        })
        .collect()
}

#[derive(Debug, Clone)]
enum Mutation {
    /// Another HTTP method.
    Method(String),
    /// Another artifact in the path.
    Artifact(ArtifactId),
    /// A parameter (one we sign, or another) set to a new value.
    Param(&'static str, NewValue),
    /// A parameter removed.
    Drop(Index),
    /// A parameter sent twice, the second time with the signed value or another.
    Repeat(Index, Option<String>),
    /// Two parameters swapped: the same query in another order.
    Swap(Index, Index),
    /// The parameters spelled another way (every byte percent-encoded): the same query.
    Respell,
    /// Verified with the key of another secret.
    Secret(Vec<u8>),
    /// Presented this long after the expiry.
    Late(u64),
    /// Edits of the raw path or query, anywhere: anything may come of them.
    PathEdits(Vec<Edit<char>>),
    QueryEdits(Vec<Edit<char>>),
}

/// Pieces of URLs that change what they mean when dropped in anywhere.
const URL_TOKENS: &[&str] = &[
    "/", "//", ".", "..", "../", "%2F", "%2E", "%", "%0", "%zz", "%00", "&", "=", "?", "#", "+",
    "%20", "kind=", "expires=", "ct=", "max=", "sig=", "0", "9", "a", "f", "F", "-",
];

fn mutation() -> impl Strategy<Value = Mutation> {
    let param = select(vec![
        "kind", "expires", "ct", "max", "sig", "x", "KIND", "sig ",
    ]);
    let new_value = prop_oneof![
        text().prop_map(NewValue::Any),
        select(vec![
            "screenshot",
            "html",
            "readability",
            "dom_index",
            "0",
            "-1",
            "01"
        ])
        .prop_map(|v| NewValue::Any(v.to_owned())),
        prop_oneof![-2i64..=2, any::<i64>()].prop_map(NewValue::Offset),
        (
            any::<Index>(),
            select(vec!['0', '1', 'a', 'f', 'A', '/', '.', 'é'])
        )
            .prop_map(|(at, c)| NewValue::Char(at, c)),
        Just(NewValue::Upper),
    ];
    prop_oneof![
        prop_oneof![
            select(vec![
                "GET", "PUT", "POST", "HEAD", "DELETE", "put", "get", ""
            ])
            .prop_map(str::to_owned),
            text(),
        ]
        .prop_map(Mutation::Method),
        artifact_id().prop_map(Mutation::Artifact),
        (param, new_value).prop_map(|(p, v)| Mutation::Param(p, v)),
        any::<Index>().prop_map(Mutation::Drop),
        (any::<Index>(), proptest::option::of(text())).prop_map(|(i, v)| Mutation::Repeat(i, v)),
        (any::<Index>(), any::<Index>()).prop_map(|(i, j)| Mutation::Swap(i, j)),
        Just(Mutation::Respell),
        vec(any::<u8>(), 0..40).prop_map(Mutation::Secret),
        any::<u64>().prop_map(Mutation::Late),
        text_edits(URL_TOKENS, 4).prop_map(Mutation::PathEdits),
        text_edits(URL_TOKENS, 4).prop_map(Mutation::QueryEdits),
    ]
}

/// What a mutation must come to.
#[derive(Debug, PartialEq)]
enum Expect {
    /// Accepted for exactly the signed grant.
    Same,
    /// Refused with this status.
    Refused(u16),
    /// Refused for having expired.
    Expired,
    /// Refused, or accepted for exactly the signed grant.
    RefusedOrSame,
}

/// Applies `mutation` to `request` and says what must come of it.
fn mutate(request: &mut Request, mutation: &Mutation) -> Expect {
    let signed = request.params();
    let mut params: Vec<(String, String)> = signed
        .iter()
        .map(|(name, value)| ((*name).to_owned(), value.clone()))
        .collect();
    let expect = match mutation {
        Mutation::Method(method) => {
            let same = *method == request.method;
            request.method.clone_from(method);
            if same {
                Expect::Same
            } else {
                Expect::Refused(405)
            }
        }
        Mutation::Artifact(id) => {
            let (prefix, old) = request.path.rsplit_once('/').expect("a path");
            let same = old == id.as_str();
            request.path = format!("{prefix}/{id}");
            if same {
                Expect::Same
            } else {
                Expect::Refused(403)
            }
        }
        Mutation::Param(name, new) => {
            let old = signed
                .iter()
                .find(|(n, _)| n == name)
                .map(|(_, v)| v.as_str());
            let value = match (new, old) {
                (NewValue::Any(v), _) => v.clone(),
                (NewValue::Offset(d), old) => match old.map(str::parse::<u64>) {
                    Some(Ok(n)) => n.wrapping_add_signed(*d).to_string(),
                    _ => d.to_string(),
                },
                (NewValue::Char(at, c), Some(old)) if !old.is_empty() => {
                    let mut chars: Vec<char> = old.chars().collect();
                    let at = at.index(chars.len());
                    chars[at] = *c;
                    chars.into_iter().collect()
                }
                (NewValue::Char(_, c), _) => c.to_string(),
                (NewValue::Upper, old) => old.unwrap_or("x").to_uppercase(),
            };
            let same = old == Some(value.as_str());
            match params.iter_mut().find(|(n, _)| n == name) {
                Some(param) => param.1 = value,
                None => params.push(((*name).to_owned(), value)),
            }
            if same {
                Expect::Same
            } else {
                Expect::Refused(403)
            }
        }
        Mutation::Drop(i) => {
            params.remove(i.index(params.len()));
            Expect::Refused(403)
        }
        Mutation::Repeat(i, value) => {
            let mut again = params[i.index(params.len())].clone();
            if let Some(value) = value {
                again.1.clone_from(value);
            }
            params.push(again);
            Expect::Refused(403)
        }
        Mutation::Swap(i, j) => {
            let len = params.len();
            params.swap(i.index(len), j.index(len));
            Expect::Same
        }
        Mutation::Respell => Expect::Same,
        Mutation::Secret(secret) => {
            request.key = derive_signing_key(secret);
            if secret == SECRET {
                Expect::Same
            } else {
                Expect::Refused(403)
            }
        }
        Mutation::Late(after) => {
            request.now_ms = request.expires_at_ms().saturating_add(*after);
            Expect::Expired
        }
        Mutation::PathEdits(edits) => {
            request.path = apply_to_str(&request.path, edits);
            Expect::RefusedOrSame
        }
        Mutation::QueryEdits(edits) => {
            // Edits of the query exactly as the signer wrote it.
            request.query = apply_to_str(&request.query, edits);
            return Expect::RefusedOrSame;
        }
    };
    request.query = params
        .iter()
        .map(|(n, v)| format!("{}={}", encode(n), encode(v)))
        .collect::<Vec<_>>()
        .join("&");
    expect
}

/// The R2 prefix `key` lies in, checked segment by segment: `tasks/<taskId>/<kind>/<id>` and
/// nothing that a path could resolve elsewhere.
fn assert_within_its_task(key: &str, task: &TaskId) -> Result<(), TestCaseError> {
    prop_assert!(key.starts_with(&task_prefix(task)), "{key}");
    let segments: Vec<&str> = key.split('/').collect();
    prop_assert_eq!(segments.len(), 4, "{}", key);
    for segment in segments {
        prop_assert!(
            !segment.is_empty() && segment != "." && segment != "..",
            "{key}"
        );
        prop_assert!(
            segment
                .bytes()
                .all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || b"-._".contains(&b)),
            "{key}"
        );
    }
    Ok(())
}

/// Strings to read as ids and keys: anything, or valid ones edited with the characters that
/// matter in paths and ids.
fn id_like() -> impl Strategy<Value = String> {
    const TOKENS: &[&str] = &[
        "/",
        ".",
        "..",
        "../",
        "%2F",
        "\\",
        "-",
        "a",
        "f",
        "g",
        "A",
        "0",
        "é",
        "\u{0}",
        " ",
        "tasks/",
        "screenshot",
        "html",
    ];
    prop_oneof![
        text(),
        "(?s).{0,80}",
        (artifact_id(), text_edits(TOKENS, 3))
            .prop_map(|(id, edits)| apply_to_str(id.as_str(), &edits)),
        (artifact_id(), kind(), text_edits(TOKENS, 3))
            .prop_map(|(id, kind, edits)| apply_to_str(&id.object_key(kind), &edits)),
        task_id().prop_map(|t| t.as_str().to_owned()),
        artifact_id().prop_map(|id| id.as_str().to_owned()),
        (artifact_id(), kind()).prop_map(|(id, kind)| id.object_key(kind)),
    ]
}

/// Bodies of `POST /api/artifacts/presign`: any JSON, or one with the fields, mostly valid.
fn presign_body() -> impl Strategy<Value = Value> {
    let kind_and_type = prop_oneof![
        3 => kind().prop_flat_map(|kind| {
            let allowed = select(kind.allowed_media_types().to_vec()).prop_map(Value::from);
            (Just(json!(kind.as_str())), prop_oneof![3 => allowed, 1 => content_type().prop_map(Value::from)])
        }),
        1 => (json_value(), content_type().prop_map(Value::from)),
    ];
    let fields = (
        prop_oneof![
            3 => task_id().prop_map(|t| json!(t.as_str())),
            1 => id_like().prop_map(Value::from),
        ],
        kind_and_type,
        prop_oneof![
            3 => (0..=READABILITY_MAX_BYTES).prop_map(Value::from),
            1 => any::<u64>().prop_map(Value::from),
            1 => json_value(),
        ],
        proptest::option::of(text()),
    )
        .prop_map(|(task, (kind, content_type), length, action_id)| {
            json!({ "taskId": task, "kind": kind, "contentType": content_type,
                    "contentLength": length, "actionId": action_id })
        });
    prop_oneof![1 => json_value(), 3 => fields]
}

proptest! {
    // Each property runs in well under a second natively; `make fuzz` raises the count.
    #![proptest_config(cases(256))]

    #[test]
    fn signed_urls_are_accepted_for_exactly_their_grant(request in request()) {
        prop_assert_eq!(request.authorize(), Ok(request.grant.clone()));
    }

    #[test]
    fn signed_urls_mutated_are_refused(mut request in request(), mutation in mutation()) {
        let grant = request.grant.clone();
        let expect = mutate(&mut request, &mutation);
        let result = request.authorize();
        match expect {
            Expect::Same => prop_assert_eq!(result, Ok(grant)),
            Expect::Expired => prop_assert_eq!(
                result,
                Err(Error::Expired)
            ),
            Expect::Refused(status) => {
                let refusal = result.expect_err("a change to something signed is refused");
                prop_assert_eq!(refusal.status(), status, "{:?}", refusal);
                // A forged URL never passes for a genuine one that merely expired.
                prop_assert_ne!(refusal, Error::Expired);
            }
            Expect::RefusedOrSame => {
                if let Ok(accepted) = result {
                    prop_assert_eq!(accepted, grant);
                }
            }
        }
    }

    #[test]
    fn signed_urls_from_any_request_are_refused(
        method in prop_oneof![Just("PUT".to_owned()), Just("GET".to_owned()), text()],
        path in prop_oneof![
            text(),
            (select(vec!["/artifacts/upload/", "/artifacts/download/"]), id_like())
                .prop_map(|(prefix, id)| format!("{prefix}{id}")),
        ],
        query in prop_oneof![
            text(),
            "(?s).{0,120}",
            vec((select(vec!["kind", "expires", "ct", "max", "sig"]), text()), 0..7)
                .prop_map(|params| params
                    .iter()
                    .map(|(n, v)| format!("{n}={}", encode(v)))
                    .collect::<Vec<_>>()
                    .join("&")),
        ],
        now_ms in any::<u64>(),
    ) {
        let refusal = authorize(&signing_key(), &method, &path, &query, now_ms)
            .expect_err("nothing unsigned is accepted");
        prop_assert!(
            matches!(refusal, Error::NotFound | Error::MethodNotAllowed { .. } | Error::Expired | Error::BadSignature | Error::Malformed(_)),
            "{:?}",
            refusal
        );
    }

    /// `POST /api/artifacts/presign` end to end: any body is refused or gives a grant inside
    /// the task's prefix whose URL is accepted for exactly that grant, and whose upload
    /// checks never allow more than was granted.
    #[test]
    fn signed_urls_from_presign_requests_grant_what_was_asked(
        body in presign_body(),
        random in any::<[u8; 16]>(),
        now_ms in 0..u64::MAX / 2,
        expiry_secs in any::<u64>(),
        headers in (
            any::<bool>(),
            proptest::option::of(content_type()),
            proptest::option::of(prop_oneof![0..=2 * READABILITY_MAX_BYTES, any::<u64>()]),
        ),
    ) {
        let Ok(request) = serde_json::from_value::<PresignRequest>(body) else {
            return Ok(());
        };
        let Ok(grant) = grant_upload(&request, random, now_ms, expiry_secs) else {
            return Ok(());
        };
        assert_within_its_task(&grant.key(), &request.task_id)?;
        prop_assert!(grant.expires_at_ms > now_ms);
        let signer = UrlSigner::Worker {
            signing_key: signing_key(),
            origin: "https://mimo.test".to_owned(),
        };
        let url = signer.upload_url(&grant, now_ms)?;
        let (path, query) = url
            .strip_prefix("https://mimo.test")
            .and_then(|u| u.split_once('?'))
            .expect("a URL of the worker");
        prop_assert_eq!(
            authorize(&signing_key(), "PUT", path, query, now_ms),
            Ok(Grant::Upload(grant.clone()))
        );
        // The upload sends the type granted, or another one (or none), and any length.
        let (as_granted, other_type, content_length) = headers;
        let content_type = if as_granted { Some(grant.content_type.clone()) } else { other_type };
        if let Ok(limit) = check_upload(&grant, content_type.as_deref(), content_length) {
            prop_assert!(limit <= grant.max_length && limit <= grant.kind.max_bytes());
            prop_assert!(content_length.is_none_or(|l| l <= limit));
            prop_assert!(content_type.is_some_and(|ct| grant.kind.allows_content_type(&ct)));
        }
    }

    /// R2's own presigned URLs: any grant at any time is signed or refused, never a panic.
    #[test]
    fn signed_urls_for_r2_are_made_or_refused(
        request in request(),
        now_ms in any::<u64>(),
    ) {
        let r2 = R2Config::new("0123456789abcdef0123456789abcdef", "bucket", "AK", "SK")
            .expect("valid credentials");
        let signer = UrlSigner::R2(r2);
        let url = match &request.grant {
            Grant::Upload(g) => signer.upload_url(g, now_ms),
            Grant::Download(g) => signer.download_url(g, None, now_ms),
        };
        if let Ok(url) = url {
            prop_assert!(url.starts_with("https://") && url.contains("X-Amz-Signature="), "{url}");
        }
    }

    #[test]
    fn artifact_keys_round_trip(task in task_id(), random in any::<[u8; 16]>()) {
        prop_assert_eq!(TaskId::parse(task.as_str()), Ok(task.clone()));
        let id = ArtifactId::new(&task, random);
        prop_assert_eq!(ArtifactId::parse(id.as_str()), Ok(id.clone()));
        prop_assert_eq!(id.to_string().parse::<ArtifactId>(), Ok(id.clone()));
        prop_assert_eq!(id.task_id(), task.clone());
        let json = serde_json::to_string(&id)?;
        prop_assert_eq!(serde_json::from_str::<ArtifactId>(&json)?, id.clone());
        for (kind, key) in ArtifactKind::ALL.into_iter().zip(id.candidate_keys()) {
            prop_assert_eq!(&key, &id.object_key(kind));
            prop_assert_eq!(parse_object_key(&key), Ok((kind, id.clone())));
            assert_within_its_task(&key, &task)?;
        }
    }

    #[test]
    fn artifact_keys_from_any_string_stay_within_their_task(s in id_like()) {
        if let Ok(task) = TaskId::parse(&s) {
            prop_assert_eq!(task.as_str(), &s);
            prop_assert_eq!(task_prefix(&task), format!("tasks/{s}/"));
        }
        let parsed = ArtifactId::parse(&s);
        // JSON bodies and paths read ids the same way.
        prop_assert_eq!(
            serde_json::from_value::<ArtifactId>(Value::from(s.as_str())).ok(),
            parsed.clone().ok()
        );
        if let Ok(id) = parsed {
            prop_assert_eq!(id.as_str(), &s);
            prop_assert_eq!(TaskId::parse(id.task_id_str()), Ok(id.task_id()));
            for kind in ArtifactKind::ALL {
                let key = id.object_key(kind);
                assert_within_its_task(&key, &id.task_id())?;
                prop_assert_eq!(parse_object_key(&key), Ok((kind, id.clone())));
            }
        }
        if let Ok((kind, id)) = parse_object_key(&s) {
            // The one spelling of that key: nothing else reads as it.
            prop_assert_eq!(id.object_key(kind), s.clone());
            assert_within_its_task(&s, &id.task_id())?;
        }
    }
}
