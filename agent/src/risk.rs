//! Which steps wait for the person's confirmation (seed 002 §6): the irreversible ones —
//! paying, ordering, deleting, sending, publishing, submitting a password. Reading, navigating,
//! searching, scrolling and adding to a cart go ahead.

use mimo_protocol::AgentAction;

/// Words on an element that mark a click on it as irreversible, matched as whole words.
const IRREVERSIBLE: &[&str] = &[
    "pay",
    "pay now",
    "purchase",
    "place order",
    "buy now",
    "order now",
    "confirm order",
    "confirm purchase",
    "delete",
    "remove account",
    "send",
    "publish",
    "post",
    "transfer",
    "unsubscribe",
    "submit",
];

/// Why `action` needs a confirmation on a page whose element list is `elements` (the index's
/// text form), or `None` when it may run.
pub fn needs_confirmation(action: &AgentAction, elements: &str) -> Option<String> {
    match action {
        AgentAction::Click { index } => {
            let line = element_line(elements, *index)?;
            let words = normalized(line);
            let hit = IRREVERSIBLE
                .iter()
                .find(|w| words.contains(&format!(" {w} ")))?;
            Some(format!(
                "clicking [{index}] {} looks irreversible (“{hit}”)",
                line.trim()
            ))
        }
        AgentAction::Type {
            index,
            submit: true,
            ..
        } => {
            let line = element_line(elements, *index)?;
            line.contains("type=password").then(|| {
                format!(
                    "typing into the password field [{index}] and submitting signs in or changes an account"
                )
            })
        }
        _ => None,
    }
}

/// The line of element `index` in the element list, without its `[index]` marker.
fn element_line(elements: &str, index: u32) -> Option<&str> {
    let marker = format!("[{index}]");
    elements
        .lines()
        .find_map(|line| line.trim_start().strip_prefix(&marker))
}

/// Lower case, every run of non-alphanumerics one space, padded: whole words match as
/// ` word `.
fn normalized(text: &str) -> String {
    let mut out = String::from(" ");
    for c in text.chars() {
        if c.is_alphanumeric() {
            out.extend(c.to_lowercase());
        } else if !out.ends_with(' ') {
            out.push(' ');
        }
    }
    if !out.ends_with(' ') {
        out.push(' ');
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    const PAGE: &str = "page http://shop.test/cart \"Cart\"
[1]<a href=index.html>Mug Shop</a>
[2]<button>Add to cart</button>
  [3]<button>Place order</button>
[4]<input type=password name=pw>
[5]<input type=search name=q placeholder=\"Search products\">
[6]<a href=/posts>Postcode lookup</a>
[7]<input type=submit value=\"Send\">
[13]<button>Delete account</button>";

    fn click(index: u32) -> AgentAction {
        AgentAction::Click { index }
    }

    #[test]
    fn irreversible_clicks_need_a_confirmation_and_the_reason_names_the_element() {
        let reason = needs_confirmation(&click(3), PAGE).unwrap();
        assert!(
            reason.contains("[3]") && reason.contains("Place order"),
            "{reason}"
        );
        assert!(
            needs_confirmation(&click(7), PAGE).is_some(),
            "a value counts"
        );
        assert!(needs_confirmation(&click(13), PAGE).is_some());
    }

    #[test]
    fn ordinary_steps_go_ahead() {
        for index in [1, 2, 6] {
            assert_eq!(needs_confirmation(&click(index), PAGE), None, "[{index}]");
        }
        // [1] is not [13]'s prefix.
        assert_eq!(needs_confirmation(&click(1), PAGE), None);
        let search = AgentAction::Type {
            index: 5,
            text: "mug".into(),
            submit: true,
        };
        assert_eq!(needs_confirmation(&search, PAGE), None);
        let navigate = AgentAction::Navigate {
            url: "http://shop.test/delete".into(),
        };
        assert_eq!(needs_confirmation(&navigate, PAGE), None);
        // An element not on the page: the extension reports TARGET_NOT_FOUND instead.
        assert_eq!(needs_confirmation(&click(99), PAGE), None);
    }

    #[test]
    fn submitting_a_password_needs_a_confirmation_typing_it_alone_does_not() {
        let mut action = AgentAction::Type {
            index: 4,
            text: "hunter2".into(),
            submit: true,
        };
        assert!(needs_confirmation(&action, PAGE).is_some());
        if let AgentAction::Type { submit, .. } = &mut action {
            *submit = false;
        }
        assert_eq!(needs_confirmation(&action, PAGE), None);
    }
}
