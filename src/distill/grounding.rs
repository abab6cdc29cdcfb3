//! Whether a draft rests on the episodes it cites. A language model's draft is refused (counted
//! in the run's stats, never stored) when it
//! - repeats itself ("I'm so glad you're here! I'm so glad you're here! …") or is no
//!   statement at all (a name, a number: SmolLM2 answered "John", "1"),
//! - repeats the prompt's own instructions or example rather than its episodes,
//! - is not close enough to what it cites: its cosine to the cited episodes' centroid and to
//!   the best of them, each below the embedder's threshold, or
//! - cites an episode it has nothing to do with.
//!
//! Measured in the memories' own embedding space, so the thresholds are per embedder
//! (`embed::calibration`, figures in docs/review.md).

pub use crate::embed::GroundingThresholds;
use crate::embed::cosine;

/// Why a draft was refused.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Refusal {
    Degenerate,
    CopiesPrompt,
    Ungrounded,
    UnsupportedSource,
    /// The write screen refused it (instruction injection in a draft).
    Screened,
}

impl Refusal {
    pub const ALL: [Refusal; 5] = [
        Refusal::Degenerate,
        Refusal::CopiesPrompt,
        Refusal::Ungrounded,
        Refusal::UnsupportedSource,
        Refusal::Screened,
    ];

    /// The run-stats key this refusal is counted under.
    pub fn key(self) -> &'static str {
        match self {
            Refusal::Degenerate => "drafts_refused_degenerate",
            Refusal::CopiesPrompt => "drafts_refused_copied_prompt",
            Refusal::Ungrounded => "drafts_refused_ungrounded",
            Refusal::UnsupportedSource => "drafts_refused_unsupported_source",
            Refusal::Screened => "drafts_refused_screened",
        }
    }
}

/// A draft's measures against its sources and the prompt.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Grounding {
    pub centroid: f32,
    pub best: f32,
    /// The least supported cited episode.
    pub worst: f32,
    /// The closest of the prompt's own sentences.
    pub prompt: f32,
    pub degenerate: bool,
    /// The draft's text is inside the prompt's own text.
    pub verbatim_prompt: bool,
}

impl Grounding {
    /// Measure `draft` (its text and vector) against its cited episodes' vectors and the
    /// prompt's own sentences (`prompt_words`: the template without its episodes, as
    /// `prompt_words` makes it, once per run).
    pub fn measure(
        draft: &str,
        vector: &[f32],
        sources: &[&[f32]],
        prompt_sentences: &[Vec<f32>],
        prompt_words: &str,
    ) -> Self {
        let scores: Vec<f32> = sources.iter().map(|s| cosine(vector, s)).collect();
        let mut centroid = vec![0.0f32; vector.len()];
        for source in sources {
            centroid.iter_mut().zip(*source).for_each(|(c, x)| *c += x);
        }
        let normalised = normalise(draft);
        Grounding {
            centroid: cosine(vector, &centroid),
            best: scores.iter().copied().fold(f32::MIN, f32::max).max(-1.0),
            worst: scores.iter().copied().fold(f32::MAX, f32::min).min(1.0),
            prompt: prompt_sentences
                .iter()
                .map(|p| cosine(vector, p))
                .fold(-1.0, f32::max),
            degenerate: degenerate(draft),
            verbatim_prompt: (normalised.split_whitespace().count() >= 4
                && prompt_words.contains(&normalised))
                || shows_an_episode_date(draft),
        }
    }

    /// The first rule the draft breaks, if any.
    pub fn verdict(&self, t: &GroundingThresholds) -> Result<(), Refusal> {
        if self.degenerate {
            return Err(Refusal::Degenerate);
        }
        if self.verbatim_prompt || (self.prompt >= t.copy && self.prompt > self.best) {
            return Err(Refusal::CopiesPrompt);
        }
        if self.centroid < t.min_centroid || self.best < t.min_best {
            return Err(Refusal::Ungrounded);
        }
        if self.worst < t.min_source {
            return Err(Refusal::UnsupportedSource);
        }
        Ok(())
    }
}

/// The prompt's own episode scaffolding, `(YYYY-MM-DD)`: SmolLM2 drafted "Episodes: 1
/// (2023-05-08) Caroline: Hey, …" (a draft is written without dates, as the prompt says).
fn shows_an_episode_date(draft: &str) -> bool {
    let bytes = draft.as_bytes();
    bytes.windows(12).any(|w| {
        w[0] == b'('
            && w[11] == b')'
            && w[5] == b'-'
            && w[8] == b'-'
            && [1, 2, 3, 4, 6, 7, 9, 10]
                .iter()
                .all(|&i| w[i].is_ascii_digit())
    })
}

/// A prompt's text as `Grounding::measure` compares drafts with it.
pub fn prompt_words(text: &str) -> String {
    normalise(text)
}

/// Lower-cased words only, single-spaced.
fn normalise(text: &str) -> String {
    text.split(|c: char| !c.is_alphanumeric())
        .filter(|w| !w.is_empty())
        .map(str::to_lowercase)
        .collect::<Vec<_>>()
        .join(" ")
}

/// The same sentence twice, or one three-word run three times: a model stuck in a loop (real
/// knowledge is one sentence; it never needs to say anything twice). Or too short to state
/// anything: fewer than three words, or four characters of CJK text.
fn degenerate(text: &str) -> bool {
    let words = normalise(text);
    let cjk = words.chars().filter(|c| is_cjk(*c)).count();
    if words.split_whitespace().count() < 3 && cjk < 4 {
        return true;
    }
    let sentences: Vec<String> = text
        .split(['.', '!', '?', '。', '！', '？'])
        .map(normalise)
        .filter(|s| !s.is_empty())
        .collect();
    for (i, s) in sentences.iter().enumerate() {
        if sentences[..i].contains(s) {
            return true;
        }
    }
    // Over the normalised words, so commas do not hide a loop ("I'm a dancer, I'm a dancer,
    // I'm a dancer": Gemma 3 270M).
    let words: Vec<&str> = words.split_whitespace().collect();
    let mut seen = std::collections::HashMap::new();
    words.windows(3).any(|w| {
        let count = seen.entry(w.join(" ")).or_insert(0);
        *count += 1;
        *count >= 3
    })
}

fn is_cjk(c: char) -> bool {
    matches!(c as u32, 0x3040..=0x30FF | 0x3400..=0x4DBF | 0x4E00..=0x9FFF | 0xAC00..=0xD7AF)
}

#[cfg(test)]
mod tests {
    use super::*;

    const T: GroundingThresholds = GroundingThresholds {
        min_centroid: 0.5,
        min_best: 0.5,
        min_source: 0.2,
        copy: 0.8,
    };

    fn measure(vector: &[f32], sources: &[&[f32]], prompt: &[Vec<f32>]) -> Grounding {
        Grounding::measure("The user likes tea.", vector, sources, prompt, "")
    }

    #[test]
    fn close_to_its_sources_passes_and_far_is_ungrounded() {
        let (a, b) = ([1.0, 0.1, 0.0], [0.9, 0.2, 0.0]);
        assert_eq!(
            measure(&[1.0, 0.15, 0.0], &[&a, &b], &[]).verdict(&T),
            Ok(())
        );
        assert_eq!(
            measure(&[0.0, 0.0, 1.0], &[&a, &b], &[]).verdict(&T),
            Err(Refusal::Ungrounded)
        );
    }

    #[test]
    fn one_unrelated_citation_refuses_the_draft() {
        let (a, b, stranger) = ([1.0, 0.0, 0.0], [0.95, 0.1, 0.0], [0.0, 0.0, 1.0]);
        let g = measure(&[1.0, 0.05, 0.0], &[&a, &b, &stranger], &[]);
        assert!(g.best > 0.99 && g.worst < 0.01, "{g:?}");
        assert_eq!(g.verdict(&T), Err(Refusal::UnsupportedSource));
    }

    #[test]
    fn nearer_the_prompt_than_the_episodes_copies_it() {
        let a = [0.6, 0.8, 0.0];
        let prompt = vec![vec![1.0, 0.0, 0.0]];
        let g = measure(&[1.0, 0.05, 0.0], &[&a], &prompt);
        assert_eq!(g.verdict(&T), Err(Refusal::CopiesPrompt));
        // As close to the prompt, but closer still to its episode: a draft on the same topic.
        let g = measure(&[1.0, 0.05, 0.0], &[&[1.0, 0.04, 0.0]], &prompt);
        assert_eq!(g.verdict(&T), Ok(()));
        let g = Grounding::measure(
            "the user wants data sources cited",
            &[1.0, 0.0],
            &[&[1.0, 0.0]],
            &[],
            &prompt_words("Write it (\"The user wants data sources cited in every report.\")"),
        );
        assert_eq!(g.verdict(&T), Err(Refusal::CopiesPrompt), "verbatim");
        let g = Grounding::measure(
            "Episodes: 1 (2023-05-08) Caroline: Hey, I'm so proud of you!",
            &[1.0, 0.0],
            &[&[1.0, 0.0]],
            &[],
            "",
        );
        assert_eq!(
            g.verdict(&T),
            Err(Refusal::CopiesPrompt),
            "the episode scaffolding"
        );
    }

    #[test]
    fn loops_are_degenerate_and_ordinary_sentences_are_not() {
        assert!(degenerate(
            "I'm so glad you're here! I'm so glad you're here! I'm so glad"
        ));
        assert!(degenerate(
            "she likes the park and the park and the park and"
        ));
        assert!(degenerate("他喜欢猫。他喜欢猫。"));
        assert!(degenerate("I'm a dancer, I'm a dancer, I'm a dancer"));
        assert!(!degenerate(
            "Caroline plans to adopt a child and is researching agencies."
        ));
        assert!(!degenerate(
            "The user likes tea. The user drinks it at night."
        ));
        for no_statement in ["John", "1", "2.", "Talk later"] {
            assert!(degenerate(no_statement), "{no_statement}");
        }
        assert!(!degenerate("用户住在柏林。"));
        assert!(!degenerate("Talk to you later!"));
    }
}
