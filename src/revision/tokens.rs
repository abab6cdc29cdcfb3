//! A sentence as the revision rules read it: tokens with what each is (a function word, a
//! negation, a value, a content word), and the word lists the rules consult. English words
//! are lower-cased and stemmed (Snowball, as the lexical arm stems them), so "lives" and
//! "live" align; Chinese (and other CJK) text is read a character a token, a run of numerals
//! one token, since it has no spaces to split on.

use crate::lexical::{is_cjk, stem};

/// What a token is, for the rules.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Kind {
    /// Articles, auxiliaries, pronouns, prepositions, adverbs of time and degree: words whose
    /// change alone does not make another statement.
    Function,
    /// not, never, no, n't, 不, 没, 未, 无 …: counted for the sentence's polarity.
    Negation,
    /// also, too, another, again, 也, 还, 又, 另: the newer sentence adds to the older.
    Additive,
    /// A number, an amount, a date or time, a version or code, a proper name (capitalised
    /// inside the sentence): what a fact's value usually is.
    Value(ValueKind),
    /// Any other word or CJK character.
    Content,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum ValueKind {
    /// Digits, numerals, number words, money, percentages, versions, codes.
    Number,
    /// Weekdays, months, times of day.
    Time,
    /// A capitalised word that does not start the sentence.
    Name,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) struct Token {
    /// What the diff compares: lower-cased and stemmed.
    pub key: String,
    /// The word as written, lower-cased (the word lists match it).
    pub word: String,
    pub kind: Kind,
}

impl Token {
    pub fn is_content(&self) -> bool {
        matches!(self.kind, Kind::Content | Kind::Value(_))
    }

    pub fn is_value(&self) -> bool {
        matches!(self.kind, Kind::Value(_))
    }

    /// A number or a time: a slot that can stand before the verb as an adverbial ("On
    /// Mondays the report goes out", "周报每周一发") without being the sentence's subject.
    pub fn is_number_or_time(&self) -> bool {
        matches!(
            self.kind,
            Kind::Value(ValueKind::Number) | Kind::Value(ValueKind::Time)
        )
    }

    /// Digits or numerals.
    pub fn is_number(&self) -> bool {
        matches!(self.kind, Kind::Value(ValueKind::Number))
    }
}

/// The tokens of `text`, in order.
pub(super) fn tokens(text: &str) -> Vec<Token> {
    let chars: Vec<char> = text.chars().collect();
    let mut out = Vec::new();
    let mut i = 0;
    // Whether the next Latin word starts a sentence (its capital says nothing of a name).
    let mut sentence_start = true;
    while i < chars.len() {
        let c = chars[i];
        if is_cjk(c) {
            if let Some(end) = cjk_number_end(&chars, i) {
                let text: String = chars[i..end].iter().collect();
                out.push(value(text, ValueKind::Number));
                i = end;
            } else {
                out.push(cjk_token(&chars, i));
                i += 1;
            }
            sentence_start = false;
            continue;
        }
        if c.is_alphanumeric() || (is_currency(c) && next_is_digit(&chars, i)) {
            let end = word_end(&chars, i);
            let raw: String = chars[i..end].iter().collect();
            latin_word(&raw, sentence_start, &mut out);
            i = end;
            sentence_start = false;
            continue;
        }
        if matches!(c, '.' | '!' | '?' | '。' | '！' | '？' | ';' | '；') {
            sentence_start = true;
        }
        if matches!(c, ':' | '=' | '：') {
            // "Favourite colour: blue", but also "Caroline: Wow, amazing!" (a chat log's
            // speaker): aligned as a function word, never read as a copula.
            out.push(function(":"));
        }
        i += 1;
    }
    out
}

/// How many sentences `text` holds: a `!`, `?`, `;` (and their CJK forms) or `。` ends one when
/// more words follow; so does a `.` followed by a space and a capital, unless it ends a title
/// ("Dr. Chen") or an initial.
pub(super) fn sentences(text: &str) -> usize {
    let chars: Vec<char> = text.chars().collect();
    let more_words = |from: usize| chars[from..].iter().any(|c| c.is_alphanumeric());
    let mut count = 1;
    for (i, &c) in chars.iter().enumerate() {
        let ends = match c {
            '!' | '?' | ';' | '。' | '！' | '？' | '；' => true,
            '.' => {
                let word: String = chars[..i]
                    .iter()
                    .rev()
                    .take_while(|c| c.is_alphabetic())
                    .collect();
                chars.get(i + 1).is_some_and(|c| c.is_whitespace())
                    && chars[i + 1..]
                        .iter()
                        .find(|c| !c.is_whitespace())
                        .is_some_and(|c| c.is_uppercase())
                    && word.chars().count() > 1
                    && !TITLES.contains(
                        &word
                            .chars()
                            .rev()
                            .collect::<String>()
                            .to_lowercase()
                            .as_str(),
                    )
            }
            _ => false,
        };
        if ends && more_words(i + 1) {
            count += 1;
        }
    }
    count
}

/// Abbreviations a `.` ends without ending the sentence.
const TITLES: &[&str] = &[
    "dr", "mr", "mrs", "ms", "prof", "st", "jr", "sr", "vs", "etc", "inc", "ltd", "co", "no", "mt",
    "ave", "rd",
];

fn next_is_digit(chars: &[char], i: usize) -> bool {
    chars.get(i + 1).is_some_and(|c| c.is_ascii_digit())
}

fn is_currency(c: char) -> bool {
    matches!(c, '$' | '€' | '£' | '¥' | '₹' | '￥')
}

/// Where the Latin word (or number) starting at `start` ends: letters and digits, an
/// apostrophe inside a word, and between digits the marks numbers and codes carry (1,200 ·
/// 3.5 · 10:30 · 2024-05-01 · v1.2.3); a currency sign before and a % after stay with it.
fn word_end(chars: &[char], start: usize) -> usize {
    let mut i = start;
    if is_currency(chars[i]) {
        i += 1;
    }
    while i < chars.len() {
        let c = chars[i];
        if c.is_alphanumeric() && !is_cjk(c) {
            i += 1;
            continue;
        }
        let between = |ok: fn(char) -> bool| {
            i > start && ok(chars[i - 1]) && chars.get(i + 1).is_some_and(|n| ok(*n) && !is_cjk(*n))
        };
        // An apostrophe inside a word; a number's marks between digits (1,200 · 10:30);
        // a code's between letters and digits (v1.2-rc1, ABC-123).
        let joins = (matches!(c, '\'' | '’') && between(char::is_alphabetic))
            || (matches!(c, '.' | ',' | ':' | '/' | '-' | '_') && between(|c| c.is_ascii_digit()))
            || (matches!(c, '.' | '-' | '_')
                && between(|c| c.is_ascii_alphanumeric())
                && (chars[start..i].iter().any(|c| c.is_ascii_digit())
                    || chars.get(i + 1).is_some_and(|c| c.is_ascii_digit())));
        if joins {
            i += 1;
        } else if c == '%' && i > start && chars[i - 1].is_ascii_digit() {
            i += 1;
            break;
        } else {
            break;
        }
    }
    i
}

/// One Latin word (with its contraction, if any) as tokens.
fn latin_word(raw: &str, sentence_start: bool, out: &mut Vec<Token>) {
    let lower = raw.to_lowercase().replace('’', "'");
    if lower.chars().any(|c| c.is_ascii_digit()) || raw.starts_with(is_currency) {
        out.push(value(lower, ValueKind::Number));
        return;
    }
    // Contractions: "isn't" → is + not, "can't" → can + not, "user's" → user + 's.
    let (stem_part, clitic) = match lower.find('\'') {
        Some(at) => (lower[..at].to_owned(), Some(lower[at..].to_owned())),
        None => (lower.clone(), None),
    };
    let negated = stem_part.ends_with('n') && clitic.as_deref() == Some("'t");
    let base = if negated {
        match stem_part.as_str() {
            "can" | "ca" => "can".to_owned(),
            "won" | "wo" => "will".to_owned(),
            "shan" => "shall".to_owned(),
            other => other.trim_end_matches('n').to_owned(),
        }
    } else {
        stem_part
    };
    if !base.is_empty() {
        let capitalised = raw.chars().next().is_some_and(char::is_uppercase);
        out.push(classify(&base, capitalised && !sentence_start));
    }
    match clitic.as_deref() {
        Some("'t") => out.push(Token {
            key: "not".to_owned(),
            word: "not".to_owned(),
            kind: Kind::Negation,
        }),
        Some(clitic) => out.push(function(clitic)),
        None => {}
    }
}

/// A lower-cased English word's token; `name`: capitalised inside a sentence.
fn classify(word: &str, name: bool) -> Token {
    let kind = if NEGATIONS.contains(&word) {
        Kind::Negation
    } else if ADDITIVE.contains(&word) {
        Kind::Additive
    } else if NUMBER_WORDS.contains(&word) {
        Kind::Value(ValueKind::Number)
    } else if TIME_WORDS.contains(&word.trim_end_matches('s')) && (word != "may" || name) {
        Kind::Value(ValueKind::Time)
    } else if FUNCTION_WORDS.contains(&word) {
        Kind::Function
    } else if name {
        Kind::Value(ValueKind::Name)
    } else {
        Kind::Content
    };
    let key = match kind {
        Kind::Value(ValueKind::Time) => word.trim_end_matches('s').to_owned(),
        Kind::Content | Kind::Value(ValueKind::Name) => stem(word.to_owned()),
        _ => word.to_owned(),
    };
    Token {
        key,
        word: word.to_owned(),
        kind,
    }
}

fn function(word: &str) -> Token {
    Token {
        key: word.to_owned(),
        word: word.to_owned(),
        kind: Kind::Function,
    }
}

fn value(text: String, kind: ValueKind) -> Token {
    Token {
        key: text.clone(),
        word: text,
        kind: Kind::Value(kind),
    }
}

/// Chinese numerals (and digits among them), with the units of large numbers.
fn is_cjk_numeral(c: char) -> bool {
    "零〇一二两三四五六七八九十百千万亿".contains(c)
}

/// The end of a run of numerals starting at `start`, when one starts there.
fn cjk_number_end(chars: &[char], start: usize) -> Option<usize> {
    if !is_cjk_numeral(chars[start]) {
        return None;
    }
    // 一 inside common words (一起, 一直, 一样, 统一, 唯一) is no number.
    let next = chars.get(start + 1).copied();
    let previous = start.checked_sub(1).map(|p| chars[p]);
    if chars[start] == '一'
        && (next.is_some_and(|n| "起直样些下切定般旦致共向起边点".contains(n))
            || previous.is_some_and(|p| "统唯万第".contains(p)))
    {
        return None;
    }
    let mut end = start + 1;
    while end < chars.len()
        && (is_cjk_numeral(chars[end])
            || chars[end] == '点' && end + 1 < chars.len() && is_cjk_numeral(chars[end + 1]))
    {
        end += 1;
    }
    Some(end)
}

/// One CJK character's token.
fn cjk_token(chars: &[char], i: usize) -> Token {
    let c = chars[i];
    let pair = |a: usize, b: usize| -> String { chars[a..=b].iter().collect() };
    let with_next = (i + 1 < chars.len()).then(|| pair(i, i + 1));
    let with_previous = i.checked_sub(1).map(|p| pair(p, i));
    let in_word = |words: &[&str]| {
        with_next.as_deref().is_some_and(|w| words.contains(&w))
            || with_previous.as_deref().is_some_and(|w| words.contains(&w))
    };
    // 不过 is "but", and 不 + 过敏 "not allergic".
    let negates_a_word =
        i + 2 < chars.len() && CJK_CONTENT_WORDS.contains(&pair(i + 1, i + 2).as_str());
    let kind = if CJK_NEGATIONS.contains(c) && (negates_a_word || !in_word(CJK_NOT_NEGATIONS)) {
        Kind::Negation
    } else if CJK_ADDITIVE.contains(c) && !in_word(CJK_NOT_ADDITIVE) {
        Kind::Additive
    } else if CJK_TIME.contains(c)
        && with_previous
            .as_deref()
            .is_some_and(|w| w.starts_with("星期") || w.starts_with('周') || w.starts_with('礼'))
    {
        Kind::Value(ValueKind::Time)
    } else if (CJK_FUNCTION.contains(c) && !in_word(CJK_CONTENT_WORDS))
        || in_word(CJK_FUNCTION_WORDS)
    {
        Kind::Function
    } else {
        Kind::Content
    };
    Token {
        key: c.to_string(),
        word: c.to_string(),
        kind,
    }
}

/// English negations (n't is split off as `not`).
const NEGATIONS: &[&str] = &[
    "not", "no", "never", "cannot", "nobody", "nothing", "none", "neither", "nor", "nowhere",
];

const ADDITIVE: &[&str] = &["also", "too", "another", "again", "additionally", "besides"];

const NUMBER_WORDS: &[&str] = &[
    "zero",
    "one",
    "two",
    "three",
    "four",
    "five",
    "six",
    "seven",
    "eight",
    "nine",
    "ten",
    "eleven",
    "twelve",
    "thirteen",
    "fourteen",
    "fifteen",
    "sixteen",
    "seventeen",
    "eighteen",
    "nineteen",
    "twenty",
    "thirty",
    "forty",
    "fifty",
    "sixty",
    "seventy",
    "eighty",
    "ninety",
    "hundred",
    "thousand",
    "million",
    "billion",
    "dozen",
    "half",
    "first",
    "second",
    "third",
    "fourth",
    "fifth",
    "once",
    "twice",
    "daily",
    "weekly",
    "monthly",
    "yearly",
    "biweekly",
    "fortnightly",
    "quarterly",
    "annually",
    "hourly",
];

/// Weekdays, months and times of day (a trailing `s` is taken off first: "Mondays").
const TIME_WORDS: &[&str] = &[
    "monday",
    "tuesday",
    "wednesday",
    "thursday",
    "friday",
    "saturday",
    "sunday",
    "weekday",
    "weekend",
    "january",
    "february",
    "march",
    "april",
    "may",
    "june",
    "july",
    "august",
    "september",
    "october",
    "november",
    "december",
    "morning",
    "afternoon",
    "evening",
    "night",
    "noon",
    "midnight",
    "pm",
    "today",
    "tomorrow",
    "tonight",
    "yesterday",
];

/// Words that alone never make another statement.
const FUNCTION_WORDS: &[&str] = &[
    "a",
    "an",
    "the",
    "this",
    "that",
    "these",
    "those",
    "is",
    "are",
    "am",
    "was",
    "were",
    "be",
    "been",
    "being",
    "'s",
    "'re",
    "'m",
    "'ve",
    "'ll",
    "'d",
    "do",
    "does",
    "did",
    "has",
    "have",
    "had",
    "having",
    "will",
    "would",
    "shall",
    "should",
    "can",
    "could",
    "may",
    "might",
    "must",
    "of",
    "to",
    "in",
    "on",
    "at",
    "for",
    "with",
    "by",
    "into",
    "onto",
    "about",
    "as",
    "and",
    "or",
    "but",
    "so",
    "if",
    "then",
    "than",
    "there",
    "here",
    "it",
    "its",
    "i",
    "me",
    "my",
    "mine",
    "we",
    "us",
    "our",
    "you",
    "your",
    "he",
    "him",
    "his",
    "she",
    "her",
    "they",
    "them",
    "their",
    "who",
    "which",
    "what",
    "whose",
    "very",
    "really",
    "just",
    "still",
    "now",
    "currently",
    "presently",
    "actually",
    "indeed",
    "longer",
    "anymore",
    "any",
    "more",
    "some",
    "all",
    "every",
    "each",
    "usually",
    "always",
    "generally",
    "typically",
    "normally",
    "already",
    "yet",
    "instead",
    "up",
    "out",
    "over",
    "per",
    "via",
];

/// Verbs and adjectives whose complement is one of several that can be true together
/// (stems): "likes Python" and "likes Rust", "speaks Spanish" and "speaks French".
pub(super) const MANY_VALUED: &[&str] = &[
    "like",
    "love",
    "enjoy",
    "hate",
    "dislik",
    "adore",
    "play",
    "speak",
    "own",
    "visit",
    "know",
    "collect",
    "read",
    "watch",
    "eat",
    "drink",
    "listen",
    "follow",
    "use",
    "studi",
    "learn",
    "support",
    "attend",
    "allerg",
    "interest",
    "fan",
    "friend",
    "member",
    "fluent",
    "practic",
    "cook",
    "subscrib",
    "tri",
    "avoid",
    "want",
    "need",
    "wish",
    "hope",
    "dream",
    "miss",
    "keep",
    "grow",
    "write",
    "teach",
    "sing",
    "draw",
    "paint",
    "admir",
    "prais",
    "mention",
    "recommend",
    "bought",
    "buy",
    "contain",
    "includ",
    "feel",
    "afraid",
    "scare",
    "good",
    "skill",
    "expert",
    "familiar",
    "worri",
    "excit",
    "passion",
    "care",
    "appreci",
];

/// Possession: "has a dog" and "has a cat" can both be true; "has 2 dogs" and "has 3 dogs"
/// cannot (a number in the complement makes it single-valued).
pub(super) const POSSESSION: &[&str] = &["has", "have", "had", "having"];

/// Past-tense forms of common irregular verbs: a sentence whose verb is one of these (or ends
/// in -ed) tells of an event.
pub(super) const IRREGULAR_PAST: &[&str] = &[
    "went", "met", "saw", "made", "took", "got", "gave", "bought", "ran", "ate", "drank", "came",
    "left", "told", "said", "found", "began", "wrote", "flew", "drove", "spent", "paid", "won",
    "lost", "sold", "sent", "built", "caught", "taught", "thought", "brought", "felt", "kept",
    "slept", "swam", "sang", "rode", "wore", "chose", "spoke", "heard", "held", "read", "sat",
    "stood", "threw", "fell", "broke", "forgot", "hit", "put", "set", "cut", "shut",
];

/// Words that place a sentence at a past moment: it tells of an event.
pub(super) const PAST_MARKERS: &[&str] = &["yesterday", "ago", "last", "earlier", "recently"];

/// English copulas, auxiliaries and modals: where a predicate starts.
pub(super) const COPULAS: &[&str] = &[
    "is", "are", "am", "was", "were", "be", "been", "has", "have", "had", "do", "does", "did",
    "will", "would", "shall", "should", "can", "could", "may", "might", "must", "'re", "'m",
];

/// Pronouns that are a whole subject: the next word is the verb.
pub(super) const PRONOUNS: &[&str] = &["i", "we", "you", "he", "she", "they", "it"];

/// Present copulas and past ones: a swap of one for the other alone changes a state's time
/// ("is married to" → "was married to").
pub(super) const PRESENT: &[&str] = &[
    "is", "are", "am", "'s", "'re", "'m", "has", "have", "do", "does", "will",
];
pub(super) const PAST: &[&str] = &["was", "were", "had", "did", "used"];

const CJK_NEGATIONS: &str = "不没未无非别勿莫";
/// Words in which a negation character negates nothing (非常 "very", 别人 "others" …).
const CJK_NOT_NEGATIONS: &[&str] = &[
    "非常", "别人", "别的", "不过", "不错", "无论", "不少", "不仅", "不管", "不但", "无数", "特别",
    "区别", "差别", "分别", "告别", "级别", "性别", "类别", "识别", "个别", "并非", "莫名", "无聊",
    "不断", "不久", "毫无", "无限", "无线",
];
const CJK_ADDITIVE: &str = "也还又另";
const CJK_NOT_ADDITIVE: &[&str] = &[
    "还是", "还有", "另外", "还款", "归还", "还原", "偿还", "退还",
];
/// Characters that end a weekday (星期三, 周五, 礼拜天).
const CJK_TIME: &str = "一二三四五六日天末";
/// Particles, copulas, prepositions, pronouns and adverbs of time and degree.
const CJK_FUNCTION: &str =
    "的地得了着过呢吗吧啊呀嘛很都就在是把被和与及或这那个些已将从对向给于其他她它们我你您再能";
/// Adverbs of time and degree written with characters that mean something else alone.
const CJK_FUNCTION_WORDS: &[&str] = &[
    "现在", "目前", "已经", "正在", "一直", "仍然", "通常", "平时", "总是", "依然", "如今", "当前",
    "眼下", "始终", "常常", "经常", "确实", "其实",
    // Modal verbs, as English "can": 可以, 能够; 没法 / 无法 "cannot" (the negation stays one).
    "可以", "能够", "没法", "无法",
];
/// Words in which a function character carries meaning (过敏 "allergic", 会议 "meeting" …).
const CJK_CONTENT_WORDS: &[&str] = &[
    "过敏", "会议", "开会", "周会", "例会", "经理", "经验", "目标", "正式", "他人", "对象", "现金",
    "前端", "前台", "要求", "重要", "需要", "会员", "社会", "机会", "其他", "为了", "因为", "作为",
    "认为", "成为", "以为", "行为", "能力", "功能", "可能", "技能", "性能", "智能", "能源",
];

/// CJK predicate markers: a copula or common verb; the subject is what comes before the
/// first of them.
pub(super) const CJK_PREDICATES: &str =
    "是为在住叫姓用喜爱讨要会能可应去来到改变定开换搬养学吃喝看读玩做当任有说";
/// CJK verbs whose complement is one of several that can be true together.
pub(super) const CJK_MANY_VALUED: &[&str] = &[
    "喜欢", "爱", "讨厌", "会说", "说", "养", "吃", "喝", "玩", "看", "读", "学", "去过", "用",
    "收藏", "关注", "支持", "参加", "过敏", "擅长", "熟悉", "有", "买", "想", "需要", "懂",
];
/// Words that place a sentence at a past moment.
pub(super) const CJK_PAST_MARKERS: &[&str] = &[
    "昨天", "前天", "上周", "上个", "去年", "刚才", "那天", "之前", "曾经", "上次",
];

#[cfg(test)]
mod tests {
    use super::*;

    fn keys(text: &str) -> Vec<String> {
        tokens(text).into_iter().map(|t| t.key).collect()
    }

    fn kinds(text: &str) -> Vec<Kind> {
        tokens(text).into_iter().map(|t| t.kind).collect()
    }

    #[test]
    fn contractions_split_and_negations_are_marked() {
        assert_eq!(
            keys("The user isn't allergic"),
            ["the", "user", "is", "not", "allerg"]
        );
        assert_eq!(keys("can't won't"), ["can", "not", "will", "not"]);
        assert_eq!(keys("Ana's mentor"), ["ana", "'s", "mentor"]);
        assert_eq!(kinds("no longer")[0], Kind::Negation);
    }

    #[test]
    fn numbers_codes_and_money_stay_whole() {
        assert_eq!(
            keys("$1,200 at 10:30 on 2024-05-01, v1.2.3 and 15% ABC-123"),
            [
                "$1,200",
                "at",
                "10:30",
                "on",
                "2024-05-01",
                "v1.2.3",
                "and",
                "15%",
                "abc-123"
            ]
        );
        assert!(
            tokens("$1,200 10:30 v1.2.3 15%")
                .iter()
                .all(Token::is_number)
        );
    }

    #[test]
    fn names_are_values_unless_they_start_a_sentence() {
        let t = tokens("Ana lives in Porto. Then Ben came");
        let name = |w: &str| t.iter().find(|t| t.word == w).unwrap().kind;
        assert_eq!(name("ana"), Kind::Content);
        assert_eq!(name("porto"), Kind::Value(ValueKind::Name));
        assert_eq!(name("ben"), Kind::Value(ValueKind::Name));
        assert_eq!(tokens("on Mondays")[1].kind, Kind::Value(ValueKind::Time));
    }

    #[test]
    fn sentences_are_counted_past_titles_and_decimals() {
        assert_eq!(sentences("The user's dentist is Dr. Chen."), 1);
        assert_eq!(sentences("The budget is 1.2M!"), 1);
        assert_eq!(sentences("Thanks, Melanie. It means a lot."), 2);
        assert_eq!(sentences("Wow! Congrats on winning! What game was it?"), 3);
        assert_eq!(sentences("用户住在上海。他在腾讯工作"), 2);
    }

    #[test]
    fn chinese_reads_a_character_a_token_and_numerals_as_one() {
        assert_eq!(
            keys("预算是一百二十万元"),
            ["预", "算", "是", "一百二十万", "元"]
        );
        assert_eq!(keys("一起去"), ["一", "起", "去"]);
        assert!(tokens("一起").iter().all(|t| !t.is_number()));
        let k = kinds("用户不再对青霉素过敏");
        assert_eq!(k[2], Kind::Negation);
        assert_eq!(k.iter().filter(|k| **k == Kind::Function).count(), 2); // 再, 对
        assert!(kinds("非常好").iter().all(|k| *k != Kind::Negation));
        assert_eq!(tokens("星期三")[2].kind, Kind::Value(ValueKind::Number));
    }
}
