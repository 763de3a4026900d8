//! A language's vocabulary: types, functions and conversions, each declared once, and
//! the guide to them that [`Language::describe`] writes from those declarations.

use std::collections::HashMap;
use std::fmt;

use futures_util::future::LocalBoxFuture;
use serde_json::{Map, Value};

/// A value's type: a JSON-native type (`string`, `number`, `boolean`, `object`, `null`)
/// or a registered domain type, one value or a list of them (`many`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct Ty {
    /// The type's name.
    pub name: &'static str,
    /// A list of values of the type.
    pub many: bool,
}

impl Ty {
    /// One value of `name`.
    pub const fn one(name: &'static str) -> Self {
        Self { name, many: false }
    }

    /// A list of values of `name`.
    pub const fn many(name: &'static str) -> Self {
        Self { name, many: true }
    }

    pub const STRING: Ty = Ty::one("string");
    pub const NUMBER: Ty = Ty::one("number");
    pub const BOOLEAN: Ty = Ty::one("boolean");
    pub const OBJECT: Ty = Ty::one("object");
    pub const NULL: Ty = Ty::one("null");
    /// Accepts any value unchanged.
    pub const ANY: Ty = Ty::one("any");

    /// Whether the type is one of JSON's own.
    pub fn is_native(&self) -> bool {
        matches!(
            self.name,
            "string" | "number" | "boolean" | "object" | "null" | "any"
        )
    }
}

impl fmt::Display for Ty {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if self.many {
            write!(f, "{}[]", self.name)
        } else {
            f.write_str(self.name)
        }
    }
}

/// The type of a JSON literal: its JSON type, an array as a list of its first
/// element's type.
pub fn literal_type(value: &Value) -> Ty {
    match value {
        Value::String(_) => Ty::STRING,
        Value::Number(_) => Ty::NUMBER,
        Value::Bool(_) => Ty::BOOLEAN,
        Value::Null => Ty::NULL,
        Value::Object(_) => Ty::OBJECT,
        Value::Array(items) => Ty::many(items.first().map_or("any", |v| literal_type(v).name)),
    }
}

/// One named argument of a function.
#[derive(Debug, Clone)]
pub struct Param {
    pub name: &'static str,
    pub ty: Ty,
    pub required: bool,
    /// One line: what the argument means.
    pub description: &'static str,
}

impl Param {
    /// A required argument.
    pub const fn required(name: &'static str, ty: Ty, description: &'static str) -> Self {
        Self {
            name,
            ty,
            required: true,
            description,
        }
    }

    /// An optional argument.
    pub const fn optional(name: &'static str, ty: Ty, description: &'static str) -> Self {
        Self {
            name,
            ty,
            required: false,
            description,
        }
    }
}

/// What a function or a conversion came to.
#[derive(Debug, Clone, PartialEq)]
pub enum Outcome {
    /// The value, of the declared type.
    Value(Value),
    /// It cannot be done; the message says why (and, where it can, what to do).
    Failed(String),
    /// More than one answer fits: `choices` are refined arguments for the same function
    /// (for a conversion: complete programs for the converted argument), each leading
    /// to one of them.
    Ambiguous { why: String, choices: Vec<Value> },
}

/// A function's or conversion's body: runs with the caller's context.
pub type Body<C, I> = for<'a> fn(&'a C, I) -> LocalBoxFuture<'a, Outcome>;

/// A function's evaluated arguments, by name (converted to the declared types).
#[derive(Debug, Clone, Default)]
pub struct Args {
    pub values: Map<String, Value>,
    /// A function answering a list should answer at most one more value than this:
    /// the evaluation refuses longer lists, so more need never be gathered.
    pub limit: usize,
}

impl Args {
    pub fn value(&self, name: &str) -> Option<&Value> {
        self.values.get(name).filter(|v| !v.is_null())
    }

    pub fn str(&self, name: &str) -> Option<&str> {
        self.value(name).and_then(Value::as_str)
    }

    pub fn u64(&self, name: &str) -> Option<u64> {
        self.value(name).and_then(Value::as_u64)
    }
}

/// A function of the language.
pub struct Function<C> {
    /// Its name in programs (`{"<name>": {...}}`).
    pub name: &'static str,
    /// One or two sentences, shown in the guide and matched by plain-words requests.
    pub description: &'static str,
    pub params: Vec<Param>,
    pub returns: Ty,
    pub body: Body<C, Args>,
}

impl<C> Function<C> {
    /// `name(arg: type, opt?: type) -> type`.
    pub fn signature(&self) -> String {
        let params: Vec<String> = self
            .params
            .iter()
            .map(|p| format!("{}{}: {}", p.name, if p.required { "" } else { "?" }, p.ty))
            .collect();
        format!("{}({}) -> {}", self.name, params.join(", "), self.returns)
    }
}

/// A registered domain type.
pub struct TypeInfo {
    pub name: &'static str,
    /// What a value of it is (its fields).
    pub description: &'static str,
    /// One value shown in an answer, in a line (a location as `file:line: text`).
    pub show: fn(&Value) -> String,
}

/// A conversion from one type to another, applied when an argument's type differs
/// from the parameter's.
pub struct Conversion<C> {
    pub from: &'static str,
    pub to: &'static str,
    /// How (shown in the guide and in a failed conversion's error).
    pub description: &'static str,
    /// Answers a value of `to` (one, or a list when several fit).
    pub body: Body<C, Value>,
}

/// Why a language cannot be put together (a programming error caught at start-up).
#[derive(Debug, thiserror::Error)]
pub enum LanguageError {
    #[error("{0:?} is declared twice")]
    Duplicate(&'static str),
    #[error("{owner:?} names the unknown type {ty:?}")]
    UnknownType {
        owner: &'static str,
        ty: &'static str,
    },
}

/// Functions, domain types and conversions.
pub struct Language<C> {
    functions: Vec<Function<C>>,
    index: HashMap<&'static str, usize>,
    types: Vec<TypeInfo>,
    conversions: Vec<Conversion<C>>,
}

/// The name of the built-in function that answers the guide.
pub const DESCRIBE: &str = "describe";

/// Functions whose name starts with this are test builds' own: callable, left out of
/// the guide (which the documentation is generated from).
pub const TEST_ONLY: &str = "debug";

impl<C> Default for Language<C> {
    fn default() -> Self {
        Self {
            functions: Vec::new(),
            index: HashMap::new(),
            types: Vec::new(),
            conversions: Vec::new(),
        }
    }
}

impl<C> Language<C> {
    /// Adds a domain type. Each also gets a constructor function of its name that
    /// takes its fields (`{"location": {"file": "a.py", "line": 3}}`): what an
    /// ambiguous answer's programs use to name one value exactly.
    pub fn type_(&mut self, info: TypeInfo) -> Result<(), LanguageError> {
        if self.type_info(info.name).is_some() || self.index.contains_key(info.name) {
            return Err(LanguageError::Duplicate(info.name));
        }
        self.types.push(info);
        Ok(())
    }

    /// Adds a function; its types must be native or registered.
    pub fn function(&mut self, f: Function<C>) -> Result<(), LanguageError> {
        if self.index.contains_key(f.name) || self.type_info(f.name).is_some() || f.name == DESCRIBE
        {
            return Err(LanguageError::Duplicate(f.name));
        }
        for ty in f.params.iter().map(|p| p.ty).chain([f.returns]) {
            self.known(f.name, ty.name)?;
        }
        self.index.insert(f.name, self.functions.len());
        self.functions.push(f);
        Ok(())
    }

    /// Adds a conversion between two known types.
    pub fn conversion(&mut self, c: Conversion<C>) -> Result<(), LanguageError> {
        self.known(c.from, c.from)?;
        self.known(c.to, c.to)?;
        if self.convert(c.from, c.to).is_some() {
            return Err(LanguageError::Duplicate(c.to));
        }
        self.conversions.push(c);
        Ok(())
    }

    fn known(&self, owner: &'static str, ty: &'static str) -> Result<(), LanguageError> {
        if Ty::one(ty).is_native() || self.type_info(ty).is_some() {
            Ok(())
        } else {
            Err(LanguageError::UnknownType { owner, ty })
        }
    }

    pub fn get(&self, name: &str) -> Option<&Function<C>> {
        self.index.get(name).map(|i| &self.functions[*i])
    }

    pub fn functions(&self) -> &[Function<C>] {
        &self.functions
    }

    pub fn type_info(&self, name: &str) -> Option<&TypeInfo> {
        self.types.iter().find(|t| t.name == name)
    }

    pub fn types(&self) -> &[TypeInfo] {
        &self.types
    }

    /// The conversion from `from` to `to`, if one is declared.
    pub fn convert(&self, from: &str, to: &str) -> Option<&Conversion<C>> {
        self.conversions
            .iter()
            .find(|c| c.from == from && c.to == to)
    }

    /// The conversions into `to`.
    pub fn conversions_to<'a>(&'a self, to: &'a str) -> impl Iterator<Item = &'a Conversion<C>> {
        self.conversions.iter().filter(move |c| c.to == to)
    }

    /// Every name a program may call: the functions, the types' constructors and
    /// `describe`.
    pub fn names(&self) -> Vec<&'static str> {
        let mut names: Vec<&'static str> = self.functions.iter().map(|f| f.name).collect();
        names.extend(self.types.iter().map(|t| t.name));
        names.push(DESCRIBE);
        names
    }

    /// The names closest to `name`, best first ([`closest_names`]), three at most.
    pub fn nearest(&self, name: &str) -> Vec<&'static str> {
        closest_names(name, self.names()).take(3).collect()
    }

    /// The guide: the syntax, every function's signature and description, the types
    /// and the conversions. `only` narrows it to one function or type.
    pub fn describe(&self, only: Option<&str>) -> Option<String> {
        let mut out = String::new();
        if let Some(name) = only {
            if name == DESCRIBE {
                return Some(format!(
                    "{DESCRIBE}(name?: string) -> string\n  The language's guide, or one function or type in detail.\n"
                ));
            }
            if let Some(f) = self.get(name) {
                out.push_str(&format!("{}\n  {}\n", f.signature(), f.description));
                for p in &f.params {
                    let opt = if p.required { "" } else { " (optional)" };
                    out.push_str(&format!(
                        "  {}: {}{} — {}\n",
                        p.name, p.ty, opt, p.description
                    ));
                }
                for p in f.params.iter().filter(|p| !p.ty.is_native()) {
                    for c in self.conversions_to(p.ty.name) {
                        out.push_str(&format!(
                            "  {} may also be a {}: {}\n",
                            p.name, c.from, c.description
                        ));
                    }
                }
                return Some(out);
            }
            let t = self.type_info(name)?;
            out.push_str(&format!("type {}: {}\n", t.name, t.description));
            for c in self.conversions_to(t.name) {
                out.push_str(&format!("  from {}: {}\n", c.from, c.description));
            }
            return Some(out);
        }
        out.push_str(
            "A request is a JSON program: an object with one field names a function, its \
             value the named arguments (an argument may itself be a call); a function with \
             one argument also takes it bare ({\"findSymbol\": \"greet\"}). An argument of \
             another type is converted when a conversion exists. The answer is a value, an \
             error, or \"ambiguous\" with complete programs to send instead. A request in \
             plain words is answered with programs that fit it.\n\nFunctions:\n",
        );
        for f in self
            .functions
            .iter()
            .filter(|f| !f.name.starts_with(TEST_ONLY))
        {
            out.push_str(&format!("  {} — {}\n", f.signature(), f.description));
        }
        out.push_str(&format!(
            "  {DESCRIBE}(name?: string) -> string — this guide, or one function or type in detail\n\nTypes (each also a constructor: {{\"<type>\": {{fields}}}}):\n"
        ));
        for t in &self.types {
            out.push_str(&format!("  {} — {}\n", t.name, t.description));
        }
        out.push_str("\nConversions:\n");
        for c in &self.conversions {
            out.push_str(&format!("  {} -> {}: {}\n", c.from, c.to, c.description));
        }
        Some(out)
    }
}

/// `names` closest to `name`, best first: those that hold its letters in order
/// (`findRefs` in `findReferences`), then by edit distance, ignoring case.
pub(crate) fn closest_names<'a>(
    name: &str,
    names: impl IntoIterator<Item = &'a str>,
) -> impl Iterator<Item = &'a str> {
    let lower = name.to_lowercase();
    let mut scored: Vec<(bool, usize, &'a str)> = names
        .into_iter()
        .map(|n| {
            let candidate = n.to_lowercase();
            (
                !in_order(&lower, &candidate),
                distance(&lower, &candidate),
                n,
            )
        })
        .collect();
    scored.sort();
    scored.into_iter().map(|(_, _, n)| n)
}

/// `names` that look like a misspelling of `name`: the same but for case, or within
/// a third of its length in edits (at least two); fewest edits first.
pub fn likely_meant<'a>(name: &str, names: impl IntoIterator<Item = &'a str>) -> Vec<&'a str> {
    let lower = name.to_lowercase();
    let near = (lower.chars().count() / 3).max(2);
    let mut scored: Vec<(usize, bool, &'a str)> = names
        .into_iter()
        .map(|n| {
            let candidate = n.to_lowercase();
            (
                distance(&lower, &candidate),
                !in_order(&lower, &candidate),
                n,
            )
        })
        .filter(|(d, _, _)| *d <= near)
        .collect();
    scored.sort();
    scored.into_iter().take(3).map(|(_, _, n)| n).collect()
}

/// Whether every character of `short` appears in `long`, in order.
fn in_order(short: &str, long: &str) -> bool {
    let mut rest = long.chars();
    short.chars().all(|c| rest.any(|l| l == c))
}

/// Levenshtein distance over characters.
fn distance(a: &str, b: &str) -> usize {
    let b: Vec<char> = b.chars().collect();
    let mut row: Vec<usize> = (0..=b.len()).collect();
    for (i, ca) in a.chars().enumerate() {
        let mut prev = row[0];
        row[0] = i + 1;
        for (j, cb) in b.iter().enumerate() {
            let here = row[j + 1];
            row[j + 1] = (prev + usize::from(ca != *cb))
                .min(row[j] + 1)
                .min(here + 1);
            prev = here;
        }
    }
    row[b.len()]
}

#[cfg(test)]
mod tests {
    use super::{distance, in_order, likely_meant};

    #[test]
    fn likely_meant_names_are_near_misses_only() {
        let names = [
            "readFile",
            "readResource",
            "gitLog",
            "searchWorkspace",
            "createFile",
            "renameFile",
        ];
        assert_eq!(likely_meant("readfile", names), ["readFile"]);
        assert_eq!(likely_meant("redFile", names), ["readFile"]);
        // Names holding the letters in order do not crowd out the one edit away.
        assert_eq!(likely_meant("reaeFile", names)[0], "readFile");
        assert_eq!(likely_meant("searchWorkspce", names), ["searchWorkspace"]);
        assert!(likely_meant("deployToProduction", names).is_empty());
    }

    #[test]
    fn letters_in_order() {
        assert!(in_order("findrefs", "findreferences"));
        assert!(!in_order("refsfind", "findreferences"));
    }

    #[test]
    fn edit_distance() {
        assert_eq!(distance("findrefs", "findreferences"), 6);
        assert_eq!(distance("gethover", "gethover"), 0);
        assert_eq!(distance("", "abc"), 3);
    }
}
