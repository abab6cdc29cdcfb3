//! Card numbers: 13 to 19 digits (spaces or dashes between groups allowed) that pass the Luhn
//! checksum, so order numbers and phone numbers rarely match.

use std::sync::LazyLock;

use regex::Regex;

static CANDIDATE: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(r"\b\d(?:[ -]?\d){12,18}\b").unwrap_or_else(|e| panic!("card pattern: {e}"))
});

/// Byte ranges of the card numbers in `text`.
pub fn find_all(text: &str) -> Vec<(usize, usize)> {
    CANDIDATE
        .find_iter(text)
        .filter(|m| luhn(m.as_str()))
        .map(|m| (m.start(), m.end()))
        .collect()
}

fn luhn(candidate: &str) -> bool {
    let digits: Vec<u32> = candidate.chars().filter_map(|c| c.to_digit(10)).collect();
    if !(13..=19).contains(&digits.len()) || digits.iter().all(|d| *d == digits[0]) {
        return false;
    }
    let sum: u32 = digits
        .iter()
        .rev()
        .enumerate()
        .map(|(i, d)| {
            if i % 2 == 1 {
                let doubled = d * 2;
                if doubled > 9 { doubled - 9 } else { doubled }
            } else {
                *d
            }
        })
        .sum();
    sum.is_multiple_of(10)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_checksummed_numbers_are_cards() {
        assert!(luhn("4111111111111111"));
        assert!(luhn("5500-0000-0000-0004"));
        assert!(!luhn("4111111111111112"));
        assert!(!luhn("0000000000000000"), "all one digit");
        assert_eq!(find_all("pay with 4012 8888 8888 1881 today").len(), 1);
        assert!(find_all("call 555 123 4567").is_empty());
    }
}
