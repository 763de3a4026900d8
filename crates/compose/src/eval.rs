//! Evaluating a program: calls, conversions, ambiguity written back as complete
//! programs, and the limits that keep any program bounded.

use std::cell::Cell;
use std::time::Duration;

use futures_util::future::LocalBoxFuture;
use futures_util::FutureExt;
use serde::Serialize;
use serde_json::{json, Map, Value};

use crate::language::{literal_type, Args, Function, Language, Outcome, Ty, DESCRIBE};

/// What bounds one evaluation.
#[derive(Debug, Clone)]
pub struct Limits {
    /// JSON nesting of the program (a call is two levels: `{"f": {"arg": …}}`).
    pub max_depth: usize,
    /// Calls (functions and conversions) per program.
    pub max_steps: usize,
    /// Values in any one list a function answers; functions are asked for one more at
    /// most, so that a larger answer is never built.
    pub max_items: usize,
    /// Programs listed in an ambiguous answer (the rest are counted).
    pub max_choices: usize,
    /// Wall time of the whole evaluation.
    pub time: Duration,
}

impl Default for Limits {
    fn default() -> Self {
        Self {
            max_depth: 64,
            max_steps: 64,
            max_items: 1000,
            max_choices: 10,
            time: Duration::from_secs(30),
        }
    }
}

/// A request: a program, or plain words to match against the functions.
#[derive(Debug, Clone, PartialEq)]
pub enum Request {
    Program(Value),
    Words(String),
}

impl Request {
    /// Reads a request: an object is a program; a string is a program when it is JSON
    /// text of one, plain words otherwise.
    pub fn read(input: Value, limits: &Limits) -> Result<Self, String> {
        let program = match input {
            Value::Object(_) => input,
            Value::String(text) if text.trim_start().starts_with('{') => {
                match serde_json::from_str::<Value>(&text) {
                    Ok(program) => program,
                    Err(e) if e.to_string().contains("recursion limit") => {
                        return Err(too_deep(None, limits));
                    }
                    Err(e) => {
                        return Err(format!(
                            "The request looks like a JSON program but does not parse: {e}"
                        ))
                    }
                }
            }
            Value::String(text) if !text.trim().is_empty() => return Ok(Self::Words(text)),
            _ => {
                return Err("A request is a JSON program (an object such as {\"describe\": {}}) or plain words (a string)".into());
            }
        };
        let depth = depth(&program);
        if depth > limits.max_depth {
            return Err(too_deep(Some(depth), limits));
        }
        Ok(Self::Program(program))
    }
}

fn too_deep(depth: Option<usize>, limits: &Limits) -> String {
    let levels = depth.map_or("too many".to_string(), |d| d.to_string());
    format!(
        "The program nests {levels} levels deep; at most {} (about {} calls inside one another)",
        limits.max_depth,
        limits.max_depth / 2
    )
}

/// The deepest nesting of `value`, counted without recursion.
pub fn depth(value: &Value) -> usize {
    let mut deepest = 0;
    let mut stack = vec![(value, 1)];
    while let Some((v, d)) = stack.pop() {
        deepest = deepest.max(d);
        match v {
            Value::Object(m) => stack.extend(m.values().map(|x| (x, d + 1))),
            Value::Array(a) => stack.extend(a.iter().map(|x| (x, d + 1))),
            _ => {}
        }
    }
    deepest
}

/// How an evaluation ended.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(tag = "outcome", rename_all = "camelCase")]
pub enum Answer {
    /// The program's value.
    #[serde(rename_all = "camelCase")]
    Success {
        #[serde(rename = "type")]
        ty: String,
        value: Value,
        /// Functions and conversions run.
        calls: usize,
    },
    /// More than one value fits where one is needed: each program runs to one of them.
    #[serde(rename_all = "camelCase")]
    Ambiguous {
        why: String,
        programs: Vec<Value>,
        /// Fitting programs not listed.
        #[serde(skip_serializing_if = "is_zero")]
        more: usize,
    },
    /// It cannot be done; the error says why and what would work.
    #[serde(rename_all = "camelCase")]
    Failure { error: String },
}

fn is_zero(n: &usize) -> bool {
    *n == 0
}

/// A value and its type.
#[derive(Debug, Clone)]
struct Typed {
    value: Value,
    ty: Ty,
}

/// Why evaluation stopped before a value.
enum Stop {
    Failed(String),
    /// The expression at `at` (a path of object keys from the program's root) can be
    /// replaced by each of `with`.
    Ambiguous {
        why: String,
        at: Vec<String>,
        with: Vec<Value>,
        more: usize,
    },
}

/// Runs `program` (already [`Request::read`]) in `ctx`.
pub async fn run<C>(lang: &Language<C>, ctx: &C, program: &Value, limits: &Limits) -> Answer {
    let eval = Eval {
        lang,
        ctx,
        limits,
        steps: Cell::new(0),
    };
    let evaluated = tokio::time::timeout(limits.time, eval.expr(program, Vec::new())).await;
    match evaluated {
        Err(_) => Answer::Failure {
            error: format!(
                "The program ran past its time limit ({} ms) after {} calls; ask for less, or in steps",
                limits.time.as_millis(),
                eval.steps.get()
            ),
        },
        Ok(Ok(done)) => Answer::Success {
            ty: done.ty.to_string(),
            value: done.value,
            calls: eval.steps.get(),
        },
        Ok(Err(Stop::Failed(error))) => Answer::Failure { error },
        Ok(Err(Stop::Ambiguous { why, at, with, more })) => Answer::Ambiguous {
            why,
            programs: with
                .into_iter()
                .map(|replacement| {
                    let mut whole = program.clone();
                    replace_at(&mut whole, &at, replacement);
                    whole
                })
                .collect(),
            more,
        },
    }
}

/// Puts `new` at `path` in `root`.
fn replace_at(root: &mut Value, path: &[String], new: Value) {
    let mut here = root;
    for key in path {
        match here.get_mut(key.as_str()) {
            Some(next) => here = next,
            None => return,
        }
    }
    *here = new;
}

struct Eval<'l, C> {
    lang: &'l Language<C>,
    ctx: &'l C,
    limits: &'l Limits,
    steps: Cell<usize>,
}

impl<'l, C> Eval<'l, C> {
    fn step(&self, what: &str) -> Result<(), Stop> {
        let n = self.steps.get() + 1;
        self.steps.set(n);
        if n > self.limits.max_steps {
            return Err(Stop::Failed(format!(
                "The program makes more than {} calls (stopped at {what}); ask for less, or in steps",
                self.limits.max_steps
            )));
        }
        Ok(())
    }

    /// The value of `expr`, found at `path`.
    fn expr<'a>(
        &'a self,
        expr: &'a Value,
        path: Vec<String>,
    ) -> LocalBoxFuture<'a, Result<Typed, Stop>> {
        async move {
            let Value::Object(map) = expr else {
                return Ok(Typed {
                    value: expr.clone(),
                    ty: literal_type(expr),
                });
            };
            let mut fields = map.iter();
            let (Some((name, args)), None) = (fields.next(), fields.next()) else {
                // An object of several fields (or none) is a value; but not as the whole
                // program, nor when a field names a function: that is a call gone wrong.
                let called = map
                    .keys()
                    .find(|k| self.lang.get(k).is_some() || k.as_str() == DESCRIBE);
                if path.is_empty() || called.is_some() {
                    // A few of them named, each cut short: the message goes back to a model.
                    let mut names: Vec<String> = map
                        .keys()
                        .take(5)
                        .map(|k| format!("\"{}\"", k.chars().take(40).collect::<String>()))
                        .collect();
                    if map.len() > names.len() {
                        names.push("…".into());
                    }
                    let fields = match map.len() {
                        0 => "no fields".to_string(),
                        n => format!("{n} fields ({})", names.join(", ")),
                    };
                    return Err(Stop::Failed(format!(
                        "A call is an object of one field, the function's name ({{\"searchText\": {{…}}}}); \
                         this one has {fields}. Ask for one thing, or put one call inside \
                         another's argument"
                    )));
                }
                return Ok(Typed {
                    value: expr.clone(),
                    ty: Ty::OBJECT,
                });
            };
            if let Some(f) = self.lang.get(name) {
                return self.call(f, args, path).await;
            }
            if let Some(t) = self.lang.type_info(name) {
                return match args {
                    Value::Object(_) => Ok(Typed {
                        value: args.clone(),
                        ty: Ty::one(t.name),
                    }),
                    _ => Err(Stop::Failed(format!(
                        "A {} is written with its fields: {{\"{}\": {{…}}}} ({})",
                        t.name, t.name, t.description
                    ))),
                };
            }
            if name == DESCRIBE {
                let only = match args {
                    Value::String(s) => Some(s.as_str()),
                    Value::Object(m) => m.get("name").and_then(Value::as_str),
                    _ => None,
                };
                return match self.lang.describe(only) {
                    Some(text) => Ok(Typed {
                        value: Value::String(text),
                        ty: Ty::STRING,
                    }),
                    None => Err(Stop::Failed(unknown(self.lang, only.unwrap_or_default()))),
                };
            }
            Err(Stop::Failed(unknown(self.lang, name)))
        }
        .boxed_local()
    }

    async fn call(&self, f: &Function<C>, args: &Value, path: Vec<String>) -> Result<Typed, Stop> {
        // Named arguments, or the only (required) argument given bare.
        // (parameter, its expression, where the expression is, given bare)
        let named: Vec<(&'static str, &Value, Vec<String>, bool)> = match args {
            Value::Object(map) => {
                if let Some(extra) = map.keys().find(|k| !f.params.iter().any(|p| p.name == *k)) {
                    return Err(Stop::Failed(format!(
                        "{} has no argument \"{extra}\"; it is {}",
                        f.name,
                        f.signature()
                    )));
                }
                f.params
                    .iter()
                    .filter_map(|p| {
                        map.get(p.name)
                            .map(|v| (p.name, v, extend(&path, &[f.name, p.name]), false))
                    })
                    .collect()
            }
            bare => {
                let mut required = f.params.iter().filter(|p| p.required);
                match (required.next(), required.next(), f.params.len()) {
                    (Some(p), None, _) => vec![(p.name, bare, extend(&path, &[f.name]), true)],
                    (None, _, 1) => {
                        vec![(f.params[0].name, bare, extend(&path, &[f.name]), true)]
                    }
                    _ => {
                        return Err(Stop::Failed(format!(
                            "{} takes named arguments: {} — write {{\"{}\": {{…}}}}",
                            f.name,
                            f.signature(),
                            f.name
                        )))
                    }
                }
            }
        };
        if let Some(missing) = f
            .params
            .iter()
            .find(|p| p.required && !named.iter().any(|(n, ..)| n == &p.name))
        {
            return Err(Stop::Failed(format!(
                "{} needs \"{}\" ({}: {}); it is {}",
                f.name,
                missing.name,
                missing.ty,
                missing.description,
                f.signature()
            )));
        }
        let mut values = Map::new();
        for (name, expr, at, bare) in named {
            let param = f.params.iter().find(|p| p.name == name).expect("declared");
            let arg = self.expr(expr, at.clone()).await?;
            let arg = match self.coerce(arg, param.ty, f.name, name, at.clone()).await {
                // A bare argument's replacement is written named: an object in its place
                // would read as the named arguments.
                Err(Stop::Ambiguous {
                    why,
                    at: there,
                    with,
                    more,
                }) if bare && there == at => {
                    let with = with.into_iter().map(|w| json!({ name: w })).collect();
                    return Err(Stop::Ambiguous {
                        why,
                        at,
                        with,
                        more,
                    });
                }
                other => other?,
            };
            values.insert(name.to_string(), arg.value);
        }
        self.step(f.name)?;
        let outcome = (f.body)(
            self.ctx,
            Args {
                values,
                limit: self.limits.max_items,
            },
        )
        .await;
        match outcome {
            Outcome::Value(value) => {
                self.bounded(&value, f.name)?;
                Ok(Typed {
                    value,
                    ty: f.returns,
                })
            }
            Outcome::Failed(e) => Err(Stop::Failed(format!("{}: {e}", f.name))),
            Outcome::Ambiguous { why, choices } => Err(self.ambiguous(
                format!("{}: {why}", f.name),
                path,
                choices.into_iter().map(|c| json!({ f.name: c })).collect(),
            )),
        }
    }

    fn bounded(&self, value: &Value, what: &str) -> Result<(), Stop> {
        match value {
            Value::Array(items) if items.len() > self.limits.max_items => {
                Err(too_many(what, self.limits.max_items))
            }
            _ => Ok(()),
        }
    }

    fn ambiguous(&self, why: String, at: Vec<String>, mut with: Vec<Value>) -> Stop {
        let more = with.len().saturating_sub(self.limits.max_choices);
        with.truncate(self.limits.max_choices);
        Stop::Ambiguous {
            why,
            at,
            with,
            more,
        }
    }

    /// `arg` as a `want` for argument `param` of `function` (converted, or one taken
    /// out of a list of one).
    async fn coerce(
        &self,
        arg: Typed,
        want: Ty,
        function: &str,
        param: &str,
        at: Vec<String>,
    ) -> Result<Typed, Stop> {
        let arg = if want.name == "any" || arg.ty.name == want.name || arg.ty.name == "any" {
            arg
        } else if let Some(c) = self.lang.convert(arg.ty.name, want.name) {
            let items = match (&arg.value, arg.ty.many) {
                (Value::Array(items), true) => items.clone(),
                (one, _) => vec![one.clone()],
            };
            let mut converted = Vec::new();
            // One call however many values it converts (each bounded by max_items).
            self.step(c.to)?;
            for item in items {
                let found =
                    match (c.body)(self.ctx, item).await {
                        Outcome::Value(Value::Array(many)) => many,
                        Outcome::Value(one) => vec![one],
                        Outcome::Failed(e) => {
                            return Err(Stop::Failed(format!(
                            "{function}: \"{param}\" wants {}; converting the {} ({}) failed: {e}",
                            a(&want.to_string()), arg.ty, c.description
                        )))
                        }
                        Outcome::Ambiguous { why, choices } => {
                            return Err(self.ambiguous(
                                format!("{function}: \"{param}\": {why}"),
                                at,
                                choices,
                            ))
                        }
                    };
                // The same value twice is one (three matches in a file are one file).
                for one in found {
                    if !converted.contains(&one) {
                        converted.push(one);
                    }
                }
                if converted.len() > self.limits.max_items {
                    return Err(too_many(c.to, self.limits.max_items));
                }
            }
            let many = arg.ty.many || converted.len() != 1;
            Typed {
                value: if many {
                    Value::Array(converted)
                } else {
                    converted.remove(0)
                },
                ty: Ty {
                    name: want.name,
                    many,
                },
            }
        } else {
            let from: Vec<&str> = self
                .lang
                .conversions_to(want.name)
                .map(|c| c.from)
                .collect();
            let how = if from.is_empty() {
                String::new()
            } else {
                format!(
                    "; a {} can also be given as: {}",
                    want.name,
                    from.join(", ")
                )
            };
            return Err(Stop::Failed(format!(
                "{function}: \"{param}\" wants {}, got {}{how}",
                a(&want.to_string()),
                a(&arg.ty.to_string())
            )));
        };
        match (arg.ty.many, want.many) {
            (true, false) => {
                let Value::Array(mut items) = arg.value else {
                    unreachable!("a list is an array")
                };
                match items.len() {
                    0 => Err(Stop::Failed(format!(
                        "{function}: nothing found for \"{param}\" (a {want})"
                    ))),
                    1 => Ok(Typed {
                        value: items.remove(0),
                        ty: want,
                    }),
                    n => {
                        let pinned = items.iter().map(|v| self.pin(want.name, v)).collect();
                        Err(self.ambiguous(
                            format!("{function}: \"{param}\" matched {n} values of type {}; each program below names one", want.name),
                            at,
                            pinned,
                        ))
                    }
                }
            }
            (false, true) => Ok(Typed {
                value: Value::Array(vec![arg.value]),
                ty: want,
            }),
            _ => Ok(Typed {
                value: arg.value,
                ty: want,
            }),
        }
    }

    /// A program that answers exactly `value`: its type's constructor, or the literal.
    fn pin(&self, ty: &str, value: &Value) -> Value {
        if self.lang.type_info(ty).is_some() {
            json!({ ty: value })
        } else {
            value.clone()
        }
    }
}

fn too_many(what: &str, max: usize) -> Stop {
    Stop::Failed(format!(
        "{what} found more than {max} results; at most {max} are kept — narrow it"
    ))
}

/// `word` after its indefinite article.
fn a(word: &str) -> String {
    let vowel = word.starts_with(['a', 'e', 'i', 'o', 'u']);
    format!("{} {word}", if vowel { "an" } else { "a" })
}

fn extend(path: &[String], more: &[&str]) -> Vec<String> {
    let mut p = path.to_vec();
    p.extend(more.iter().map(|s| s.to_string()));
    p
}

fn unknown<C>(lang: &Language<C>, name: &str) -> String {
    format!(
        "There is no function \"{name}\"; the nearest are: {} ({{\"describe\": {{}}}} lists them all)",
        lang.nearest(name).join(", ")
    )
}

/// An answer's value in compact lines: each value of a domain type as its type shows
/// it, strings as they are, anything else as JSON.
/// `ty` is the answer's type as [`Answer::Success`] names it.
pub fn show<C>(lang: &Language<C>, ty: &str, value: &Value) -> String {
    let ty = ty.trim_end_matches("[]");
    let one = |v: &Value| match (lang.type_info(ty), v) {
        (Some(t), _) => (t.show)(v),
        (None, Value::String(s)) => s.clone(),
        (None, other) => other.to_string(),
    };
    match value {
        Value::Array(items) if ty != "any" || items.iter().all(|i| !i.is_array()) => {
            items.iter().map(one).collect::<Vec<_>>().join("\n")
        }
        other => one(other),
    }
}
