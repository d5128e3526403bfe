//! What a model's tokens cost: `MIMO_LLM_PRICE` ("input,output" dollars per million tokens),
//! else the published list prices of common models, so a run's cost is counted and can be
//! bounded (`MIMO_AGENT_MAX_COST`).

/// Dollars per million tokens, kept in millionths of a dollar so that sums stay exact.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Price {
    pub input_micros_per_mtok: u64,
    pub output_micros_per_mtok: u64,
}

impl Price {
    pub const fn dollars(input: f64, output: f64) -> Self {
        Price {
            input_micros_per_mtok: (input * 1_000_000.0) as u64,
            output_micros_per_mtok: (output * 1_000_000.0) as u64,
        }
    }

    /// What `input` and `output` tokens cost, in millionths of a dollar (rounded up).
    pub fn cost_micros(self, input: u64, output: u64) -> u64 {
        let total = u128::from(input) * u128::from(self.input_micros_per_mtok)
            + u128::from(output) * u128::from(self.output_micros_per_mtok);
        total.div_ceil(1_000_000).min(u128::from(u64::MAX)) as u64
    }

    /// `"input,output"` in dollars per million tokens, e.g. `"2.5,10"`.
    pub fn parse(raw: &str) -> Option<Price> {
        let (input, output) = raw.split_once(',')?;
        let dollars = |s: &str| {
            s.trim()
                .parse::<f64>()
                .ok()
                .filter(|d| d.is_finite() && *d >= 0.0)
        };
        Some(Price::dollars(dollars(input)?, dollars(output)?))
    }
}

/// List prices of common models by name prefix, longest prefix first (dollars per million
/// input and output tokens).
const KNOWN: &[(&str, f64, f64)] = &[
    ("gpt-4o-mini", 0.15, 0.6),
    ("gpt-4o", 2.5, 10.0),
    ("gpt-4.1-nano", 0.1, 0.4),
    ("gpt-4.1-mini", 0.4, 1.6),
    ("gpt-4.1", 2.0, 8.0),
    ("gpt-5-nano", 0.05, 0.4),
    ("gpt-5-mini", 0.25, 2.0),
    ("gpt-5", 1.25, 10.0),
    ("o4-mini", 1.1, 4.4),
    ("o3", 2.0, 8.0),
    ("claude-3-5-haiku", 0.8, 4.0),
    ("claude-haiku-4", 1.0, 5.0),
    ("claude-3-5-sonnet", 3.0, 15.0),
    ("claude-3-7-sonnet", 3.0, 15.0),
    ("claude-sonnet-4", 3.0, 15.0),
    ("claude-opus-4", 15.0, 75.0),
];

/// The list price of `model`, when it is one of the common models.
pub fn known_price(model: &str) -> Option<Price> {
    let model = model.to_ascii_lowercase();
    KNOWN
        .iter()
        .filter(|(prefix, ..)| model.starts_with(prefix))
        .max_by_key(|(prefix, ..)| prefix.len())
        .map(|&(_, input, output)| Price::dollars(input, output))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn costs_are_counted_exactly_in_millionths() {
        let price = Price::dollars(2.5, 10.0);
        // 10,000 input and 1,000 output tokens: 0.025 + 0.01 dollars.
        assert_eq!(price.cost_micros(10_000, 1_000), 35_000);
        assert_eq!(price.cost_micros(0, 0), 0);
        assert_eq!(Price::dollars(0.15, 0.6).cost_micros(1, 0), 1, "rounded up");
    }

    #[test]
    fn prices_are_parsed_and_known_by_the_longest_prefix() {
        assert_eq!(Price::parse(" 3, 15 "), Some(Price::dollars(3.0, 15.0)));
        for bad in ["3", "a,b", "-1,2", "1;2", ""] {
            assert_eq!(Price::parse(bad), None, "{bad:?}");
        }
        assert_eq!(
            known_price("gpt-4o-mini-2024-07-18"),
            Some(Price::dollars(0.15, 0.6))
        );
        assert_eq!(
            known_price("gpt-4o-2024-08-06"),
            Some(Price::dollars(2.5, 10.0))
        );
        assert_eq!(
            known_price("claude-sonnet-4-20250514"),
            Some(Price::dollars(3.0, 15.0))
        );
        assert_eq!(known_price("mimo-scripted"), None);
    }
}
