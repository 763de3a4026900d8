//! Plain words to programs: a deterministic matcher over the functions' names and
//! descriptions (no model inside). "find the references to greet" becomes
//! `{"findReferences": {"symbol": {"findSymbol": {"name": "greet"}}}}`.

use serde_json::{json, Map, Value};

use crate::language::{Function, Language, Ty};

/// Words that say nothing about which function is meant.
const STOP: &[&str] = &[
    "a", "an", "the", "to", "of", "in", "on", "for", "and", "or", "is", "are", "me", "my", "all",
    "every", "what", "where", "which", "who", "how", "show", "give", "get", "list", "please",
    "this", "that", "it", "its", "with", "at", "by", "from", "i", "want", "do", "does", "can",
    "you", "named", "function", "method", "class", "symbol", "file",
];

/// Whether two words are one (`call`, `called`; `change`, `changed`): equal, or one
/// begins the other, differing by at most three letters, both at least four long.
fn same(a: &str, b: &str) -> bool {
    let (short, long) = if a.len() <= b.len() { (a, b) } else { (b, a) };
    short == long || (short.len() >= 4 && long.starts_with(short) && long.len() - short.len() <= 3)
}

/// Lower-case words of `text`, camelCase split, a plural `s` dropped.
fn words(text: &str) -> Vec<String> {
    let mut out = Vec::new();
    let mut word = String::new();
    let mut prev_lower = false;
    for ch in text.chars() {
        if ch.is_alphanumeric() {
            if ch.is_uppercase() && prev_lower && !word.is_empty() {
                out.push(std::mem::take(&mut word));
            }
            prev_lower = ch.is_lowercase();
            word.extend(ch.to_lowercase());
        } else {
            prev_lower = false;
            if !word.is_empty() {
                out.push(std::mem::take(&mut word));
            }
        }
    }
    if !word.is_empty() {
        out.push(word);
    }
    out.into_iter()
        .map(|w| match w.strip_suffix('s') {
            Some(stem) if stem.len() > 3 && !stem.ends_with('s') => stem.to_string(),
            _ => w,
        })
        .collect()
}

/// The first text between two `quote`s that stand at word edges (so that the
/// apostrophes of "where's" and "it's" are not quotes).
fn quoted(text: &str, quote: char) -> Option<String> {
    let chars: Vec<char> = text.chars().collect();
    let word = |i: usize| chars.get(i).is_some_and(|c| c.is_alphanumeric());
    let opens =
        (0..chars.len()).filter(|&i| chars[i] == quote && (i == 0 || !word(i - 1)) && word(i + 1));
    for open in opens {
        let close = (open + 1..chars.len()).find(|&i| chars[i] == quote && !word(i + 1))?;
        let inside: String = chars[open + 1..close].iter().collect();
        if !inside.trim().is_empty() {
            return Some(inside.trim().to_string());
        }
    }
    None
}

/// The name the request is about: quoted text, else the last identifier-like word
/// that is neither a stop word nor part of the language's vocabulary.
fn subject<C>(request: &str, lang: &Language<C>) -> Option<String> {
    for quote in ['`', '"', '\''] {
        if let Some(inside) = quoted(request, quote) {
            return Some(inside);
        }
    }
    let vocabulary: Vec<String> = lang
        .functions()
        .iter()
        .flat_map(|f| words(f.name).into_iter().chain(words(f.description)))
        .collect();
    request
        .split(|c: char| !(c.is_alphanumeric() || c == '_' || c == '.' || c == '/'))
        .map(|w| w.trim_end_matches('.'))
        .rfind(|w| {
            let starts = w.chars().next();
            let lw = words(w);
            starts.is_some_and(|c| c.is_alphabetic() || c == '_' || c == '.')
                && !lw
                    .iter()
                    .all(|x| STOP.contains(&x.as_str()) || vocabulary.iter().any(|v| same(v, x)))
        })
        .map(str::to_string)
}

/// Up to `max` programs that fit `request`, best first.
pub fn suggest<C>(lang: &Language<C>, request: &str, max: usize) -> Vec<Value> {
    let asked: Vec<String> = words(request)
        .into_iter()
        .filter(|w| !STOP.contains(&w.as_str()))
        .collect();
    let subject = subject(request, lang);
    let mut scored: Vec<(usize, usize, &Function<C>)> = lang
        .functions()
        .iter()
        .enumerate()
        .map(|(i, f)| {
            let name = words(f.name);
            let description = words(f.description);
            let score: usize = asked
                .iter()
                .map(|w| {
                    let hit = |list: &[String]| usize::from(list.iter().any(|x| same(x, w)));
                    3 * hit(&name) + hit(&description)
                })
                .sum();
            (score, i, f)
        })
        .filter(|(score, _, _)| *score > 0)
        .collect();
    scored.sort_by(|a, b| b.0.cmp(&a.0).then(a.1.cmp(&b.1)));
    scored
        .into_iter()
        .filter_map(|(_, _, f)| program(lang, f, subject.as_deref(), 2))
        .take(max)
        .collect()
}

/// A runnable call of `f`: each required argument is the subject (a string), or a
/// call producing its type from the subject, `depth` calls deep at most.
fn program<C>(
    lang: &Language<C>,
    f: &Function<C>,
    subject: Option<&str>,
    depth: usize,
) -> Option<Value> {
    let mut args = Map::new();
    for p in f.params.iter().filter(|p| p.required) {
        args.insert(p.name.to_string(), argument(lang, p.ty, subject, depth)?);
    }
    Some(json!({ f.name: args }))
}

fn argument<C>(lang: &Language<C>, ty: Ty, subject: Option<&str>, depth: usize) -> Option<Value> {
    match ty.name {
        "string" | "any" => subject.map(|s| Value::String(s.to_string())),
        _ if depth == 0 => None,
        name => lang
            .functions()
            .iter()
            .filter(|g| {
                g.returns.name == name && g.params.iter().filter(|p| p.required).count() > 0
            })
            .find_map(|g| program(lang, g, subject, depth - 1)),
    }
}

#[cfg(test)]
mod tests {
    use super::words;

    #[test]
    fn the_subject_is_the_name_not_a_word_of_the_language() {
        let lang: crate::Language<()> = crate::Language::default();
        assert_eq!(
            super::subject("where is greet", &lang),
            Some("greet".into())
        );
        assert_eq!(
            super::subject("where is greet called", &lang).as_deref(),
            Some("called")
        );
    }

    #[test]
    fn apostrophes_are_not_quotes() {
        assert_eq!(
            super::quoted("where's 'greet' called", '\''),
            Some("greet".into())
        );
        assert_eq!(super::quoted("where's greet? it's here", '\''), None);
    }

    #[test]
    fn forms_of_a_word_are_one() {
        assert!(super::same("call", "called") && super::same("changed", "change"));
        assert!(!super::same("use", "used") && !super::same("caller", "called"));
    }

    #[test]
    fn words_split_camel_case_and_drop_plurals() {
        assert_eq!(words("findReferences"), ["find", "reference"]);
        assert_eq!(words("Who CHANGED lines?"), ["who", "changed", "line"]);
    }
}
