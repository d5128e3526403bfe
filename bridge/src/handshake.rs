//! The mutual proof of the secret that opens a connection (see `mimo_protocol::bridge`): nonces,
//! and the two proofs, which differ by the side's name so that one can never stand for the
//! other.

use hmac::{Hmac, KeyInit, Mac};
use mimo_protocol::bridge::BRIDGE_NONCE_HEX_LEN;
use sha2::Sha256;

type HmacSha256 = Hmac<Sha256>;

/// Who proves: the bridge answers `hello` with its proof, the client sends its own in `auth`.
#[derive(Clone, Copy)]
pub(crate) enum Side {
    Bridge,
    Client,
}

impl Side {
    fn name(self) -> &'static str {
        match self {
            Side::Bridge => "bridge",
            Side::Client => "client",
        }
    }
}

fn mac(secret: &str, side: Side, client_nonce: &str, bridge_nonce: &str) -> HmacSha256 {
    let mut mac =
        <HmacSha256 as KeyInit>::new_from_slice(secret.as_bytes()).expect("HMAC takes any key");
    mac.update(
        format!(
            "mimo-bridge v1 {}\n{client_nonce}\n{bridge_nonce}",
            side.name()
        )
        .as_bytes(),
    );
    mac
}

/// `side`'s proof, as sent: lowercase hex.
pub(crate) fn proof(secret: &str, side: Side, client_nonce: &str, bridge_nonce: &str) -> String {
    hex::encode(
        mac(secret, side, client_nonce, bridge_nonce)
            .finalize()
            .into_bytes(),
    )
}

/// Whether `given` is `side`'s proof, compared in constant time.
pub(crate) fn verify(
    secret: &str,
    side: Side,
    client_nonce: &str,
    bridge_nonce: &str,
    given: &str,
) -> bool {
    let Ok(given) = hex::decode(given) else {
        return false;
    };
    mac(secret, side, client_nonce, bridge_nonce)
        .verify_slice(&given)
        .is_ok()
}

/// A fresh nonce: 32 random bytes in hex.
pub(crate) fn nonce() -> std::io::Result<String> {
    let mut bytes = [0u8; BRIDGE_NONCE_HEX_LEN / 2];
    getrandom::fill(&mut bytes).map_err(|e| std::io::Error::other(e.to_string()))?;
    Ok(hex::encode(bytes))
}

/// Whether a client's nonce has the length and digits of one (lowercase hex): a short or
/// repeated one would let a client replay an old exchange.
pub(crate) fn valid_nonce(nonce: &str) -> bool {
    nonce.len() == BRIDGE_NONCE_HEX_LEN
        && nonce
            .bytes()
            .all(|b| b.is_ascii_digit() || (b'a'..=b'f').contains(&b))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_proofs_are_hmac_sha256_of_the_documented_message() {
        // Computed independently: printf 'mimo-bridge v1 bridge\nc\nb' |
        //   openssl dgst -sha256 -hmac 'secret-0123456789'
        assert_eq!(
            proof("secret-0123456789", Side::Bridge, "c", "b"),
            BRIDGE_PROOF_C_B
        );
        assert!(verify(
            "secret-0123456789",
            Side::Bridge,
            "c",
            "b",
            BRIDGE_PROOF_C_B
        ));
        assert!(!verify(
            "secret-0123456789",
            Side::Client,
            "c",
            "b",
            BRIDGE_PROOF_C_B
        ));
        assert!(!verify(
            "secret-0123456780",
            Side::Bridge,
            "c",
            "b",
            BRIDGE_PROOF_C_B
        ));
        assert!(!verify("secret-0123456789", Side::Bridge, "c", "b", "zz"));
        assert!(!verify("secret-0123456789", Side::Bridge, "c", "b", ""));
    }

    const BRIDGE_PROOF_C_B: &str =
        "261d55c8d3d343150a7d2126cfbcd7d9dda726779b229fdc2823cd12f2f1b685";

    #[test]
    fn nonces_are_fresh_and_well_formed() {
        let (a, b) = (nonce().unwrap(), nonce().unwrap());
        assert!(valid_nonce(&a) && valid_nonce(&b) && a != b);
        assert!(!valid_nonce(&a[1..]));
        assert!(!valid_nonce(&"A".repeat(64)));
        assert!(!valid_nonce(&"g".repeat(64)));
    }
}
