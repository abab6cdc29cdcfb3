//! Whether a new memory restates an older look-alike, updates it, or stands beside it — from
//! the structure of the two sentences, not from how close their vectors are. A sentence
//! embedding scores "The weekly report goes out on Mondays" and "... on Wednesdays" as
//! near-duplicates (all-MiniLM-L6-v2: above 0.92), and "The user is allergic to penicillin"
//! and "... is not allergic ..." too; merging either into the other loses what the user said.
//!
//! Each side must be one sentence (several are read as a rewording). The two are aligned word
//! by word (a longest common subsequence over stemmed, lower-cased tokens; Chinese a character
//! a token) and what differs is read where it stands:
//!
//! - **Polarity**: one says not / never / no / n't / 不 / 没 / 未 / 无 … where the other does
//!   not, and the rest is a restatement or an update → an update (the later one holds).
//! - Only function words differ (articles, auxiliaries, "now", "currently", punctuation) → a
//!   restatement; a present copula against a past one alone ("is married" / "was married") →
//!   an update.
//! - Words are only added (or only dropped) → an added detail: both stay.
//! - What differs stands before the predicate (the first copula or verb; 是, 在, 住 …) and is
//!   not a number or a time → another subject ("Ana's mentor is Raj" / "Ben's mentor is
//!   Raj"): both stay.
//! - The predicate itself differs, or more than a slot changed (over two places, over four
//!   words in one, or more words changed than twice those kept) → a rewording, or another
//!   statement: the rules cannot tell, the caller decides (by similarity, or a model).
//! - What differs stands in the complement (after the predicate), or is a number or time
//!   anywhere → the same thing said with another value: an update, unless
//!   - the newer sentence says it adds (also, too, another, again, 也, 还, 又) → both stay;
//!   - the sentence tells of an event (a past-tense verb, "yesterday", "last week", 昨天 …):
//!     two events → both stay;
//!   - a number or code before the predicate changed as well as words after it ("Room B214
//!     hosts the standup" / "Room B241 hosts the review") → another subject: both stay;
//!   - the predicate holds several values at once (likes, speaks, visited, is allergic to, has
//!     a …; 喜欢, 会说, 养 …) and no number stands in place of a number → both stay.
//!
//! Limits (documented in docs/updates.md): a synonym in the subject reads as another subject;
//! an antonym ("likes" / "hates") as a rewording; a rephrased complement as an update (the
//! newer wording kept, the older retired, nothing lost); a change of state told as an event
//! ("moved to Porto" after "moved to Madrid") as two events.

mod tokens;

use tokens::{Kind, Token};

/// How a newer sentence relates to an older look-alike.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Relation {
    /// Says the same thing: merge.
    Restatement,
    /// Says the same single-valued thing another way round: the one that happened later holds.
    Update(Change),
    /// Both can be true at once: keep both.
    Distinct(Apart),
    /// The predicate itself is worded differently, or more than a slot or two changed: a
    /// rewording or another statement, which the rules cannot tell apart. `values_differ`: the
    /// two name different numbers, times or names (or differ in polarity), so they never merge.
    Reworded { values_differ: bool },
}

/// What an update changed.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Change {
    /// Another value in the same place (a number, a date, a name, a place, a word).
    Value,
    /// One says not where the other does not.
    Polarity,
    /// A present copula against a past one, nothing else.
    Tense,
}

/// Why two look-alikes both stay.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Apart {
    /// The newer adds words to the older (or drops some), no value among them.
    AddedDetail,
    /// What differs is the subject.
    OtherSubject,
    /// The predicate holds several values at once, or the newer says it adds one.
    ManyValued,
    /// Each tells of an event.
    Events,
    /// No predicate in common to read a value against.
    NoFrame,
}

impl Relation {
    /// As the write result's `reason` names it.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Restatement => "restatement",
            Self::Update(Change::Value) => "update:value",
            Self::Update(Change::Polarity) => "update:polarity",
            Self::Update(Change::Tense) => "update:tense",
            Self::Distinct(Apart::AddedDetail) => "distinct:added_detail",
            Self::Distinct(Apart::OtherSubject) => "distinct:other_subject",
            Self::Distinct(Apart::ManyValued) => "distinct:many_valued",
            Self::Distinct(Apart::Events) => "distinct:events",
            Self::Distinct(Apart::NoFrame) => "distinct:no_frame",
            Self::Reworded {
                values_differ: true,
            } => "distinct:reworded_values",
            Self::Reworded {
                values_differ: false,
            } => "reworded",
        }
    }

    /// What the rules leave to the caller's judgement (a model, when one is configured): the
    /// predicate worded differently, or no predicate in common to read a value against.
    pub fn is_undecided(self) -> bool {
        matches!(self, Self::Reworded { .. } | Self::Distinct(Apart::NoFrame))
    }

    /// Whether a write may be merged into the older memory: only a restatement, or a
    /// rewording that names the same values (when its similarity says it means the same).
    pub fn may_merge(self) -> bool {
        matches!(
            self,
            Self::Restatement
                | Self::Reworded {
                    values_differ: false
                }
        )
    }
}

/// Sentences longer than this (in tokens) are not aligned: a long text's differences are
/// read as a rewording.
const MAX_TOKENS: usize = 160;

/// An update's places in the sentence where words were replaced ("on Mondays at 9" → "on
/// Wednesdays at 10" is two).
const MAX_SLOTS: usize = 2;

/// Content words on either side of one replaced place ("Dr. Alvarez" → "Dr. Chen", "the Grand
/// Hotel" → "the Lakeside Inn", "a Toyota Corolla" → "a Tesla Model 3").
const MAX_SLOT_WORDS: usize = 4;

/// How `newer` relates to `older`.
pub fn compare(older: &str, newer: &str) -> Relation {
    let a = tokens::tokens(older);
    let b = tokens::tokens(newer);
    let values_differ = values_of(&a) != values_of(&b);
    let polarity_differs = polarity(&a) != polarity(&b);
    // The rules read one statement against another: several sentences (a chat turn, a note)
    // are for the caller's similarity, or a model, to judge; and never merged when their values
    // or polarity differ.
    if a.len() > MAX_TOKENS
        || b.len() > MAX_TOKENS
        || tokens::sentences(older) > 1
        || tokens::sentences(newer) > 1
    {
        return Relation::Reworded {
            values_differ: values_differ || polarity_differs,
        };
    }
    let a: Vec<Token> = a.into_iter().filter(|t| t.kind != Kind::Negation).collect();
    let b: Vec<Token> = b.into_iter().filter(|t| t.kind != Kind::Negation).collect();
    let read = read_differences(&a, &b, values_differ);
    if !polarity_differs {
        return read;
    }
    match read {
        // The same statement, or one slot changed, the other way round.
        Relation::Restatement | Relation::Update(_) => Relation::Update(Change::Polarity),
        // Something else said the other way round: never merged.
        Relation::Reworded { .. } => Relation::Reworded {
            values_differ: true,
        },
        distinct => distinct,
    }
}

/// The sentence's polarity: an odd number of negations is negative.
fn polarity(tokens: &[Token]) -> bool {
    tokens.iter().filter(|t| t.kind == Kind::Negation).count() % 2 == 1
}

/// The values a sentence names, sorted.
fn values_of(tokens: &[Token]) -> Vec<&str> {
    let mut values: Vec<&str> = tokens
        .iter()
        .filter(|t| t.is_value())
        .map(|t| t.key.as_str())
        .collect();
    values.sort_unstable();
    values
}

/// One run of differing tokens: `a[a_start..a_end]` became `b[b_start..b_end]`.
#[derive(Debug, Clone, Copy)]
struct Hunk {
    a_start: usize,
    a_end: usize,
    b_start: usize,
    b_end: usize,
}

/// The relation of two sentences of the same polarity (negations taken out).
fn read_differences(a: &[Token], b: &[Token], values_differ: bool) -> Relation {
    let hunks = diff(a, b);
    let content = |h: &Hunk| {
        a[h.a_start..h.a_end]
            .iter()
            .chain(&b[h.b_start..h.b_end])
            .any(Token::is_content)
    };
    let (meaningful, functional): (Vec<Hunk>, Vec<Hunk>) = hunks.into_iter().partition(content);
    let shared_content = a.iter().filter(|t| t.is_content()).count()
        - meaningful
            .iter()
            .map(|h| {
                a[h.a_start..h.a_end]
                    .iter()
                    .filter(|t| t.is_content())
                    .count()
            })
            .sum::<usize>();
    if meaningful.is_empty() && shared_content < 2 && !functional.is_empty() {
        // "I do" / "I did", "I love it" / "I love them": too little in common to read.
        return Relation::Distinct(Apart::NoFrame);
    }
    if meaningful.is_empty() {
        let tense_changed = functional.iter().any(|h| {
            tense(&a[h.a_start..h.a_end])
                .zip(tense(&b[h.b_start..h.b_end]))
                .is_some_and(|(x, y)| x != y)
        });
        return if tense_changed {
            Relation::Update(Change::Tense)
        } else {
            Relation::Restatement
        };
    }
    if shared_content == 0 {
        return Relation::Distinct(Apart::NoFrame);
    }
    let additive = |t: &[Token]| t.iter().any(|t| t.kind == Kind::Additive);
    let additive_added = additive(b) && !additive(a);

    // Added or dropped words only: a detail ("on Mondays and Thursdays", "a red Honda
    // hatchback"). Only words in place of others say something else.
    let one_sided = |h: &Hunk| h.a_start == h.a_end || h.b_start == h.b_end;
    if meaningful.iter().all(one_sided) {
        return Relation::Distinct(Apart::AddedDetail);
    }

    let is_number_or_time = |h: &Hunk| {
        a[h.a_start..h.a_end]
            .iter()
            .chain(&b[h.b_start..h.b_end])
            .filter(|t| t.is_content())
            .all(Token::is_number_or_time)
    };
    // The hunks that change what is said (not only add to it).
    let slots: Vec<Hunk> = meaningful
        .iter()
        .filter(|h| !one_sided(h))
        .copied()
        .collect();
    // An update changes a slot, not the sentence: at most two places, each a few words, and
    // no more words changed than twice those kept. Two turns of a conversation on one topic
    // share a few words and differ in the rest: that is another statement, not a new value.
    let width = |h: &Hunk| {
        let count = |t: &[Token]| t.iter().filter(|t| t.is_content()).count();
        count(&a[h.a_start..h.a_end]).max(count(&b[h.b_start..h.b_end]))
    };
    let changed: usize = meaningful.iter().map(width).sum();
    if slots.len() > MAX_SLOTS
        || slots.iter().map(width).max().unwrap_or(0) > MAX_SLOT_WORDS
        || changed > (2 * shared_content).max(MAX_SLOT_WORDS - 1)
    {
        return Relation::Reworded { values_differ };
    }
    let (pa, pb) = (predicate(a), predicate(b));
    if let (Some(pa), Some(pb)) = (pa, pb) {
        let mut before_and_after = (false, false);
        for h in &slots {
            let before = h.a_end <= pa && h.b_end <= pb;
            let after = h.a_start > pa && h.b_start > pb;
            if before && !is_number_or_time(h) {
                return Relation::Distinct(Apart::OtherSubject);
            }
            if !before && !after {
                // The predicate itself differs.
                return Relation::Reworded { values_differ };
            }
            before_and_after.0 |= before;
            before_and_after.1 |= after;
        }
        if before_and_after == (true, true) {
            // "Room B214 hosts the standup" / "Room B241 hosts the review": a number before
            // the verb and words after it both changed — another subject saying something
            // else. Alone, a number or time before the verb is an adverbial ("On Mondays the
            // report goes out").
            return Relation::Distinct(Apart::OtherSubject);
        }
    } else if !slots.iter().all(is_number_or_time) {
        // Without a predicate only a number or a time reads as a value wherever it stands
        // ("Standup 9:30" / "Standup 10:00").
        return Relation::Distinct(Apart::NoFrame);
    }
    if additive_added {
        return Relation::Distinct(Apart::ManyValued);
    }
    if tells_of_event(a, pa) || tells_of_event(b, pb) {
        return Relation::Distinct(Apart::Events);
    }
    // A number in place of a number ("two dogs" / "three dogs"): a count, single-valued
    // whatever the verb. One number beside words is a name ("Formula 1" / "cycling").
    let numbers = slots.iter().any(|h| {
        a[h.a_start..h.a_end].iter().any(Token::is_number)
            && b[h.b_start..h.b_end].iter().any(Token::is_number)
    });
    if let (Some(pa), Some(pb), false) = (pa, pb, numbers)
        && slots.iter().any(|h| {
            many_valued(&a[pa.min(h.a_start)..h.a_start])
                || many_valued(&b[pb.min(h.b_start)..h.b_start])
        })
    {
        return Relation::Distinct(Apart::ManyValued);
    }
    Relation::Update(Change::Value)
}

/// The runs of tokens that differ, in order, after a longest common subsequence by key.
fn diff(a: &[Token], b: &[Token]) -> Vec<Hunk> {
    let (n, m) = (a.len(), b.len());
    // lcs[i][j]: the longest common subsequence of a[i..] and b[j..].
    let mut lcs = vec![0u16; (n + 1) * (m + 1)];
    let at = |i: usize, j: usize| i * (m + 1) + j;
    for i in (0..n).rev() {
        for j in (0..m).rev() {
            lcs[at(i, j)] = if a[i].key == b[j].key {
                lcs[at(i + 1, j + 1)] + 1
            } else {
                lcs[at(i + 1, j)].max(lcs[at(i, j + 1)])
            };
        }
    }
    let mut hunks = Vec::new();
    let (mut i, mut j) = (0, 0);
    let mut open: Option<(usize, usize)> = None;
    while i < n || j < m {
        if i < n && j < m && a[i].key == b[j].key {
            if let Some((a_start, b_start)) = open.take() {
                hunks.push(Hunk {
                    a_start,
                    a_end: i,
                    b_start,
                    b_end: j,
                });
            }
            i += 1;
            j += 1;
            continue;
        }
        open.get_or_insert((i, j));
        if j < m && (i == n || lcs[at(i, j + 1)] >= lcs[at(i + 1, j)]) {
            j += 1;
        } else {
            i += 1;
        }
    }
    if let Some((a_start, b_start)) = open {
        hunks.push(Hunk {
            a_start,
            a_end: n,
            b_start,
            b_end: m,
        });
    }
    hunks
}

/// Where the sentence's predicate starts: after a pronoun subject, the next word that is not
/// a function word; else the first copula, auxiliary or verb-shaped word after the first
/// token; in CJK text the first copula or common verb. `None`: no predicate found.
fn predicate(tokens: &[Token]) -> Option<usize> {
    let first = tokens
        .iter()
        .position(|t| !matches!(t.word.as_str(), "the" | "a" | "an"))?;
    if tokens[first].key.chars().all(crate::lexical::is_cjk) {
        return tokens
            .iter()
            .enumerate()
            .skip(first + 1)
            .find(|(_, t)| {
                t.word.chars().count() == 1 && tokens::CJK_PREDICATES.contains(t.word.as_str())
            })
            .map(|(i, _)| i);
    }
    if tokens::PRONOUNS.contains(&tokens[first].word.as_str()) {
        return tokens
            .iter()
            .enumerate()
            .skip(first + 1)
            .find(|(_, t)| t.kind != Kind::Function || tokens::COPULAS.contains(&t.word.as_str()))
            .map(|(i, _)| i);
    }
    tokens
        .iter()
        .enumerate()
        .skip(first + 1)
        .find(|(i, t)| {
            tokens::COPULAS.contains(&t.word.as_str())
                || (t.kind == Kind::Content
                    && verb_shaped(&t.word)
                    && !after_determiner(tokens, *i))
        })
        .map(|(i, _)| i)
}

/// A word that looks like a finite verb: -s (not -ss, -us, -is), -ed, or a common irregular past.
fn verb_shaped(word: &str) -> bool {
    (word.ends_with('s')
        && !word.ends_with("ss")
        && !word.ends_with("us")
        && !word.ends_with("is")
        && word.len() > 3)
        || (word.ends_with("ed") && word.len() > 4)
        || tokens::IRREGULAR_PAST.contains(&word)
}

/// Whether the word at `i` follows a determiner or possessive (so is a noun: "the users").
fn after_determiner(tokens: &[Token], i: usize) -> bool {
    i.checked_sub(1).is_some_and(|p| {
        matches!(
            tokens[p].word.as_str(),
            "the"
                | "a"
                | "an"
                | "my"
                | "our"
                | "your"
                | "his"
                | "her"
                | "their"
                | "its"
                | "'s"
                | "this"
                | "that"
                | "these"
                | "those"
        )
    })
}

/// Whether the sentence tells of an event: its verb is in the past (-ed, an irregular past;
/// not a copula: "was born in" is a state) or a past moment is named.
fn tells_of_event(tokens: &[Token], predicate: Option<usize>) -> bool {
    let verb = predicate.map_or("", |p| tokens[p].word.as_str());
    let past_verb = !tokens::COPULAS.contains(&verb)
        && ((verb.ends_with("ed") && verb.len() > 4) || tokens::IRREGULAR_PAST.contains(&verb));
    // "did go", "have visited": an auxiliary then a past form.
    let past_after_aux = matches!(verb, "did" | "had")
        || (matches!(verb, "has" | "have")
            && predicate.and_then(|p| tokens.get(p + 1)).is_some_and(|t| {
                t.word.ends_with("ed") || tokens::IRREGULAR_PAST.contains(&t.word.as_str())
            }));
    let text: String = tokens.iter().map(|t| t.word.as_str()).collect();
    past_verb
        || past_after_aux
        || tokens
            .iter()
            .any(|t| tokens::PAST_MARKERS.contains(&t.word.as_str()))
        || tokens::CJK_PAST_MARKERS.iter().any(|m| text.contains(m))
}

/// Whether the words from the predicate up to a value hold a predicate of several values.
fn many_valued(span: &[Token]) -> bool {
    let text: String = span.iter().map(|t| t.word.as_str()).collect();
    span.iter().any(|t| {
        tokens::MANY_VALUED.contains(&t.key.as_str())
            || tokens::MANY_VALUED
                .iter()
                .any(|w| t.key.starts_with(w) && w.len() >= 4)
            || tokens::POSSESSION.contains(&t.word.as_str())
    }) || tokens::CJK_MANY_VALUED.iter().any(|w| text.contains(w))
}

/// Whether a run of function words holds a present copula (`Some(false)`) or a past one.
fn tense(tokens: &[Token]) -> Option<bool> {
    tokens.iter().find_map(|t| {
        if tokens::PRESENT.contains(&t.word.as_str()) {
            Some(false)
        } else if tokens::PAST.contains(&t.word.as_str()) {
            Some(true)
        } else {
            None
        }
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn check(older: &str, newer: &str, expected: Relation) {
        assert_eq!(compare(older, newer), expected, "{older:?} → {newer:?}");
    }

    const VALUE: Relation = Relation::Update(Change::Value);
    const POLARITY: Relation = Relation::Update(Change::Polarity);

    #[test]
    fn a_changed_value_is_an_update() {
        check(
            "The weekly report goes out on Mondays",
            "The weekly report goes out on Wednesdays",
            VALUE,
        );
        check(
            "Team Orion's sprint length is two weeks",
            "Team Orion's sprint length is three weeks",
            VALUE,
        );
        check("The user lives in Madrid", "The user lives in Porto", VALUE);
        check("The budget is 1M", "The budget is 1.2M", VALUE);
        check("Ana's mentor is Raj", "Ana's mentor is Priya", VALUE);
        check("用户的直属领导是刘洋", "用户的直属领导是陈静", VALUE);
        check("项目预算是一百万元", "项目预算是一百二十万元", VALUE);
        check("周报每周一发", "周报每周三发", VALUE);
        check(
            "On Mondays the report goes out",
            "On Thursdays the report goes out",
            VALUE,
        );
        check(
            "Favourite colour is blue",
            "Favourite colour is green",
            VALUE,
        );
        check("Standup: 9:30", "Standup: 10:00", VALUE);
        check(
            "The user now lives in Porto",
            "The user lives in Lisbon",
            VALUE,
        );
    }

    #[test]
    fn a_changed_polarity_is_an_update() {
        check(
            "The user is allergic to penicillin",
            "The user is not allergic to penicillin",
            POLARITY,
        );
        check(
            "The user isn't vegetarian",
            "The user is vegetarian",
            POLARITY,
        );
        check(
            "Alice works at Google",
            "Alice no longer works at Google",
            POLARITY,
        );
        check("用户对青霉素过敏", "用户对青霉素不过敏", POLARITY);
        check("用户吃肉", "用户不再吃肉了", POLARITY);
    }

    #[test]
    fn restatements_and_tense() {
        check(
            "The user prefers dark mode.",
            "the user prefers dark mode",
            Relation::Restatement,
        );
        check(
            "User lives in Porto",
            "The user currently lives in Porto",
            Relation::Restatement,
        );
        check(
            "Ana is married to Ben",
            "Ana was married to Ben",
            Relation::Update(Change::Tense),
        );
    }

    #[test]
    fn look_alikes_stay_apart() {
        check(
            "Ana's mentor is Raj",
            "Ben's mentor is Raj",
            Relation::Distinct(Apart::OtherSubject),
        );
        check(
            "张三的导师是王五",
            "李四的导师是王五",
            Relation::Distinct(Apart::OtherSubject),
        );
        check(
            "My sister lives in Porto",
            "My brother lives in Porto",
            Relation::Distinct(Apart::OtherSubject),
        );
        check(
            "The user likes Python",
            "The user likes Rust",
            Relation::Distinct(Apart::ManyValued),
        );
        check(
            "The user speaks Spanish",
            "The user speaks French",
            Relation::Distinct(Apart::ManyValued),
        );
        check(
            "用户喜欢苹果",
            "用户喜欢香蕉",
            Relation::Distinct(Apart::ManyValued),
        );
        check(
            "The user likes coffee",
            "The user likes coffee with oat milk",
            Relation::Distinct(Apart::AddedDetail),
        );
        check(
            "The user lives in Madrid",
            "The user also has a flat in Porto",
            Relation::Reworded {
                values_differ: true,
            },
        );
        check(
            "The user visited Rome",
            "The user visited Paris",
            Relation::Distinct(Apart::Events),
        );
        check(
            "The user plans to visit Rome",
            "The user plans to visit Paris",
            Relation::Distinct(Apart::ManyValued),
        );
        check(
            "Caroline: Wow, amazing!",
            "Caroline: Wow, cool!",
            Relation::Distinct(Apart::NoFrame),
        );
        check(
            "Favourite colour: blue",
            "Favourite colour: green",
            Relation::Distinct(Apart::NoFrame),
        );
        check(
            "I met Sarah for coffee on Monday",
            "I met Sarah for coffee on Thursday",
            Relation::Distinct(Apart::Events),
        );
        check(
            "The user is allergic to penicillin",
            "The user is allergic to peanuts",
            Relation::Distinct(Apart::ManyValued),
        );
        check(
            "The user has a dog",
            "The user has a cat",
            Relation::Distinct(Apart::ManyValued),
        );
        check("The user has two dogs", "The user has three dogs", VALUE);
        check(
            "Room B214 hosts the weekly standup",
            "Room B241 hosts the design review",
            Relation::Distinct(Apart::OtherSubject),
        );
    }

    #[test]
    fn two_turns_on_one_topic_are_no_update() {
        let turns = [
            (
                "Caroline: I went to a LGBTQ support group yesterday and it was so powerful.",
                "Caroline: I'm going to a pottery class next week and I'm so excited about it.",
            ),
            (
                "Melanie: That sounds great! What do you like most about painting?",
                "Melanie: That sounds fun! What do you like most about the camping trips with the kids?",
            ),
            (
                "Caroline: I don't think I'll ever stop painting",
                "Caroline: I think painting helps me relax after work",
            ),
        ];
        for (older, newer) in turns {
            let relation = compare(older, newer);
            assert!(
                !matches!(relation, Relation::Update(_)),
                "{older:?} → {newer:?}: {relation:?}"
            );
        }
    }

    #[test]
    fn a_changed_predicate_is_left_to_the_caller() {
        assert!(compare("The user loves coffee", "The user adores coffee").may_merge());
        assert!(!compare("The user lives in Madrid", "The user moved to Porto").may_merge());
    }
}
