//! The composable request language (seed 004's "scripting language"), domain-agnostic:
//! a JSON object is a call — its one field names a function, the field's value holds
//! the named arguments — and an argument may itself be a call. Values are JSON's own
//! or of registered domain types; an argument of another type is converted when a
//! conversion is declared. Evaluation ends in a value, a failure that says what would
//! work, or an ambiguity answered with complete programs, each leading to one of the
//! fitting values. Depth, calls, list sizes and time are bounded ([`Limits`]).
//!
//! The bridge declares its capabilities as a [`Language`] over its own context; this
//! crate knows nothing of files, editors or language servers.

pub mod eval;
pub mod language;
pub mod words;

pub use eval::{run, show, Answer, Limits, Request};
pub use language::{
    likely_meant, Args, Body, Conversion, Function, Language, LanguageError, Outcome, Param, Ty,
    TypeInfo,
};

#[cfg(test)]
mod tests {
    use std::time::Duration;

    use futures_util::FutureExt;
    use serde_json::{json, Value};

    use super::*;

    /// A toy domain: named points, two of them called "twin".
    struct Points;

    const POINTS: &[(&str, i64, i64)] = &[("origin", 0, 0), ("twin", 1, 1), ("twin", 5, 5)];

    fn find(name: &str, x: Option<i64>) -> Vec<Value> {
        POINTS
            .iter()
            .filter(|(n, px, _)| *n == name && x.is_none_or(|x| x == *px))
            .map(|(n, x, y)| json!({"name": n, "x": x, "y": y}))
            .collect()
    }

    fn language() -> Language<Points> {
        let mut l = Language::default();
        l.type_(TypeInfo {
            name: "point",
            description: "{name, x, y}",
            show: |v| {
                format!(
                    "{} at {},{}",
                    v["name"].as_str().unwrap_or("?"),
                    v["x"],
                    v["y"]
                )
            },
        })
        .unwrap();
        l.function(Function {
            name: "findPoint",
            description: "Points with this name.",
            params: vec![
                Param::required("name", Ty::STRING, "the name"),
                Param::optional("x", Ty::NUMBER, "only at this x"),
            ],
            returns: Ty::many("point"),
            body: |_, a| {
                async move {
                    let x = a.value("x").and_then(Value::as_i64);
                    Outcome::Value(Value::Array(find(a.str("name").unwrap_or(""), x)))
                }
                .boxed_local()
            },
        })
        .unwrap();
        l.function(Function {
            name: "distanceFromOrigin",
            description: "How far a point is from the origin, in steps.",
            params: vec![Param::required("point", Ty::one("point"), "the point")],
            returns: Ty::NUMBER,
            body: |_, a| {
                async move {
                    let p = a.value("point").cloned().unwrap_or_default();
                    Outcome::Value(json!(
                        p["x"].as_i64().unwrap_or(0) + p["y"].as_i64().unwrap_or(0)
                    ))
                }
                .boxed_local()
            },
        })
        .unwrap();
        l.function(Function {
            name: "grid",
            description: "Every point of an n by n grid.",
            params: vec![Param::required("n", Ty::NUMBER, "side")],
            returns: Ty::many("point"),
            body: |_, a| {
                async move {
                    let n = a.u64("n").unwrap_or(0) as usize;
                    // Asked for at most limit + 1: never builds more.
                    let all = (0..n * n)
                        .take(a.limit + 1)
                        .map(|i| json!({"name": "g", "x": i % n, "y": i / n}));
                    Outcome::Value(Value::Array(all.collect()))
                }
                .boxed_local()
            },
        })
        .unwrap();
        l.function(Function {
            name: "slow",
            description: "Takes a second.",
            params: vec![],
            returns: Ty::NULL,
            body: |_, _| {
                async {
                    tokio::time::sleep(Duration::from_secs(1)).await;
                    Outcome::Value(Value::Null)
                }
                .boxed_local()
            },
        })
        .unwrap();
        l.conversion(Conversion {
            from: "string",
            to: "point",
            description: "the points of that name (findPoint)",
            body: |_, v| {
                async move { Outcome::Value(Value::Array(find(v.as_str().unwrap_or(""), None))) }
                    .boxed_local()
            },
        })
        .unwrap();
        l
    }

    async fn answer(program: Value) -> Answer {
        answer_with(program, &Limits::default()).await
    }

    async fn answer_with(program: Value, limits: &Limits) -> Answer {
        let l = language();
        match Request::read(program, limits) {
            Ok(Request::Program(p)) => run(&l, &Points, &p, limits).await,
            Ok(Request::Words(w)) => Answer::Ambiguous {
                why: "words".into(),
                programs: words::suggest(&l, &w, 3),
                more: 0,
            },
            Err(error) => Answer::Failure { error },
        }
    }

    fn value(a: &Answer) -> &Value {
        match a {
            Answer::Success { value, .. } => value,
            other => panic!("{other:?}"),
        }
    }

    fn error(a: &Answer) -> &str {
        match a {
            Answer::Failure { error } => error,
            other => panic!("{other:?}"),
        }
    }

    #[tokio::test]
    async fn nested_calls_convert_and_take_the_one_value() {
        let a = answer(json!({"distanceFromOrigin": {"point": {"findPoint": {"name": "origin"}}}}))
            .await;
        assert_eq!(value(&a), &json!(0));
        // A string converts to a point; a bare argument is the only one.
        let a = answer(json!({"distanceFromOrigin": "origin"})).await;
        assert_eq!(value(&a), &json!(0));
        // As JSON text too.
        let a = answer(json!("{\"findPoint\": \"origin\"}")).await;
        let Answer::Success { ty, calls, .. } = &a else {
            panic!("{a:?}")
        };
        assert_eq!((ty.as_str(), *calls), ("point[]", 1));
        assert_eq!(show(&language(), ty, value(&a)), "origin at 0,0");
    }

    #[tokio::test]
    async fn two_fitting_values_answer_two_programs_that_each_run() {
        for program in [
            json!({"distanceFromOrigin": {"point": {"findPoint": {"name": "twin"}}}}),
            json!({"distanceFromOrigin": "twin"}),
        ] {
            let a = answer(program).await;
            let Answer::Ambiguous {
                why,
                programs,
                more,
            } = a
            else {
                panic!("{a:?}")
            };
            assert!(why.contains("matched 2"), "{why}");
            assert_eq!((programs.len(), more), (2, 0));
            let mut distances = Vec::new();
            for p in programs {
                distances.push(value(&answer(p).await).clone());
            }
            assert_eq!(distances, [json!(2), json!(10)]);
        }
    }

    #[tokio::test]
    async fn errors_name_what_would_work() {
        let e = answer(json!({"findPiont": {"name": "x"}})).await;
        assert!(
            error(&e).contains("no function \"findPiont\"") && error(&e).contains("findPoint"),
            "{e:?}"
        );
        let e = answer(json!({"distanceFromOrigin": {"point": 3}})).await;
        assert!(
            error(&e).contains("wants a point, got a number") && error(&e).contains("string"),
            "{e:?}"
        );
        let e = answer(json!({"findPoint": {"nme": "x"}})).await;
        assert!(
            error(&e).contains("no argument \"nme\"")
                && error(&e).contains("findPoint(name: string, x?: number)"),
            "{e:?}"
        );
        let e = answer(json!({"findPoint": {}})).await;
        assert!(error(&e).contains("needs \"name\""), "{e:?}");
        let e = answer(json!({"distanceFromOrigin": "nowhere"})).await;
        assert!(error(&e).contains("nothing found for \"point\""), "{e:?}");
        let e = answer(json!("{\"findPoint\": ")).await;
        assert!(error(&e).contains("does not parse"), "{e:?}");
        let d = answer(json!({"describe": "distanceFromOrigin"})).await;
        assert!(
            value(&d)
                .as_str()
                .unwrap()
                .contains("point may also be a string"),
            "{d:?}"
        );
    }

    /// Values that convert to the same one are one: three matches in one file are one
    /// file, not three programs to choose from.
    #[tokio::test]
    async fn a_conversion_that_finds_the_same_value_twice_finds_it_once() {
        let a = answer(json!({"distanceFromOrigin": {"point": ["origin", "origin"]}})).await;
        assert_eq!(value(&a), &json!(0));
    }

    /// A program of several fields (or none), or a value whose field names a function,
    /// is refused with what a call looks like, not answered with itself.
    #[tokio::test]
    async fn an_object_of_several_calls_is_refused_not_echoed() {
        for program in [
            json!({"findPoint": "origin", "grid": 2}),
            json!({}),
            json!({"distanceFromOrigin": {"point": {"findPoint": "origin", "x": 0}}}),
        ] {
            let e = answer(program.clone()).await;
            assert!(
                error(&e).contains("A call is an object of one field"),
                "{program}: {e:?}"
            );
        }
        let e = answer(json!({"findPoint": "origin", "grid": 2})).await;
        assert!(
            error(&e).contains("2 fields (\"findPoint\", \"grid\")"),
            "{e:?}"
        );
    }

    #[tokio::test]
    async fn limits_hold_at_and_past_their_edge() {
        let limits = Limits {
            max_depth: 8,
            max_steps: 3,
            max_items: 25,
            time: Duration::from_millis(100),
            ..Limits::default()
        };
        // Depth: 8 levels pass (to the parser), 9 do not.
        let nest = |levels: usize| {
            let mut v = json!("origin");
            for _ in 0..(levels - 1) / 2 {
                v = json!({"distanceFromOrigin": {"point": v}});
            }
            v
        };
        assert_eq!(eval::depth(&nest(7)), 7);
        assert!(
            !matches!(answer_with(nest(7), &limits).await, Answer::Failure { ref error } if error.contains("levels"))
        );
        let deep = answer_with(nest(11), &limits).await;
        assert!(
            error(&deep).contains("nests 11 levels deep; at most 8"),
            "{deep:?}"
        );
        // Past the JSON parser's own bound, as text.
        let text = format!("{}\"x\"{}", "{\"a\":".repeat(10_000), "}".repeat(10_000));
        let deeper = answer_with(json!(text), &limits).await;
        assert!(error(&deeper).contains("at most 8"), "{deeper:?}");
        // Items: 25 pass, 26 do not.
        assert_eq!(
            value(&answer_with(json!({"grid": 5}), &limits).await)
                .as_array()
                .unwrap()
                .len(),
            25
        );
        let wide = answer_with(json!({"grid": 100_000}), &limits).await;
        assert!(error(&wide).contains("more than 25 results"), "{wide:?}");
        // Steps: 3 calls pass, 4 do not.
        let three = json!({"distanceFromOrigin": {"point": {"findPoint": "origin"}}});
        assert!(matches!(
            answer_with(three, &limits).await,
            Answer::Success { calls: 2, .. }
        ));
        let four = json!({"distanceFromOrigin": {"point": {"findPoint": {"name": "origin", "x": {"distanceFromOrigin": "origin"}}}}});
        let many = answer_with(four, &limits).await;
        assert!(error(&many).contains("more than 3 calls"), "{many:?}");
        // Time.
        let slow = answer_with(json!({"slow": {}}), &limits).await;
        assert!(error(&slow).contains("time limit (100 ms)"), "{slow:?}");
    }

    #[tokio::test]
    async fn plain_words_become_runnable_programs() {
        let a = answer(json!("how far is the point 'origin' from the origin?")).await;
        let Answer::Ambiguous { programs, .. } = a else {
            panic!("{a:?}")
        };
        assert_eq!(
            programs[0],
            json!({"distanceFromOrigin": {"point": {"findPoint": {"name": "origin"}}}})
        );
        for p in programs {
            assert!(
                matches!(answer(p.clone()).await, Answer::Success { .. }),
                "{p}"
            );
        }
    }
}
