//! Keeps the dependencies between actor modules one-way: reads every file under
//! `src/actors` (and `src/services.rs`), collects which actor modules each one names,
//! and fails on a cycle. A node is a top-level module of `actors` (a directory counts
//! as one module), each file of `actors/messages`, and `services`.

use std::collections::{BTreeMap, BTreeSet};
use std::fs;
use std::path::{Path, PathBuf};

type Graph = BTreeMap<String, BTreeSet<String>>;

fn rust_files(dir: &Path, out: &mut Vec<PathBuf>) {
    for entry in fs::read_dir(dir).expect("src/actors is readable") {
        let path = entry.expect("directory entry").path();
        if path.is_dir() {
            rust_files(&path, out);
        } else if path.extension().is_some_and(|e| e == "rs") {
            out.push(path);
        }
    }
}

/// The node a file belongs to, from its path below `src/actors`.
fn node_of(relative: &[String]) -> String {
    let stem = |s: &str| s.trim_end_matches(".rs").to_string();
    match relative {
        [dir, file] if dir == "messages" && file != "mod.rs" => format!("messages::{}", stem(file)),
        [first, ..] => stem(first),
        [] => unreachable!("a file has a name"),
    }
}

/// Maps a path named in code (`crate::actors::a::b` as `["a", "b"]`) to a node.
fn node_named(path: &[&str]) -> Option<String> {
    match path {
        ["*", ..] => None, // `super::*` in a test module: its own file
        ["messages", sub, ..] if *sub != "*" => Some(format!("messages::{sub}")),
        [first, ..] => Some((*first).to_string()),
        [] => None,
    }
}

/// The identifiers of a `use` tree after a prefix: `a::b`, or `{a::b, c}`.
fn heads(rest: &str) -> Vec<Vec<&str>> {
    let rest = rest.trim_start();
    if let Some(inner) = rest.strip_prefix('{') {
        let mut depth = 1;
        let end = inner
            .char_indices()
            .find(|(_, c)| {
                match c {
                    '{' => depth += 1,
                    '}' => depth -= 1,
                    _ => {}
                }
                depth == 0
            })
            .map_or(inner.len(), |(i, _)| i);
        let mut items = Vec::new();
        let mut depth = 0;
        let mut start = 0;
        let body = &inner[..end];
        for (i, c) in body.char_indices() {
            match c {
                '{' => depth += 1,
                '}' => depth -= 1,
                ',' if depth == 0 => {
                    items.push(&body[start..i]);
                    start = i + 1;
                }
                _ => {}
            }
        }
        items.push(&body[start..]);
        return items
            .into_iter()
            .filter(|i| !i.trim().is_empty())
            .flat_map(heads)
            .collect();
    }
    let prefix = rest
        .split(|c: char| !(c.is_alphanumeric() || c == '_' || c == ':' || c == '*'))
        .next()
        .unwrap_or("");
    let path: Vec<&str> = prefix.split("::").filter(|s| !s.is_empty()).collect();
    if rest[prefix.len()..].starts_with('{') {
        // `a::{b, c::d}`: the items continue the prefix.
        return heads(&rest[prefix.len()..])
            .into_iter()
            .map(|tail| path.iter().copied().chain(tail).collect())
            .collect();
    }
    vec![path]
}

/// The nodes a file's code names.
fn named_in(code: &str, super_is_actors: bool, in_messages: bool) -> BTreeSet<String> {
    let mut named = BTreeSet::new();
    let code: String = code
        .lines()
        .filter(|l| !l.trim_start().starts_with("//"))
        .collect::<Vec<_>>()
        .join("\n");
    for (i, _) in code.match_indices("crate::actors::") {
        let rest = &code[i + "crate::actors::".len()..];
        named.extend(heads(rest).iter().filter_map(|p| node_named(p)));
    }
    if code.contains("crate::services") {
        named.insert("services".to_string());
    }
    if super_is_actors || in_messages {
        for (i, _) in code.match_indices("super::") {
            if code[..i].ends_with("super::") {
                continue;
            }
            let rest = &code[i + "super::".len()..];
            for path in heads(rest) {
                let node = if in_messages {
                    path.first().map(|m| format!("messages::{m}"))
                } else {
                    node_named(&path)
                };
                named.extend(node);
            }
        }
    }
    named
}

fn graph() -> Graph {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    let actors = root.join("actors");
    let mut files = Vec::new();
    rust_files(&actors, &mut files);
    let mut graph = Graph::new();
    for file in files {
        let relative: Vec<String> = file
            .strip_prefix(&actors)
            .expect("below src/actors")
            .iter()
            .map(|c| c.to_string_lossy().into_owned())
            .collect();
        if relative.len() == 1 && relative[0] == "mod.rs" {
            continue; // declares the modules, depends on none
        }
        let node = node_of(&relative);
        let top_level_or_mod =
            relative.len() == 1 || relative.last().is_some_and(|f| f == "mod.rs");
        let in_messages = relative.len() == 2 && relative[0] == "messages";
        let code = fs::read_to_string(&file).expect("readable source");
        let named = named_in(&code, top_level_or_mod && !in_messages, in_messages);
        let edges = graph.entry(node.clone()).or_default();
        edges.extend(named.into_iter().filter(|n| *n != node));
    }
    let services = fs::read_to_string(root.join("services.rs")).expect("src/services.rs");
    graph.insert("services".into(), named_in(&services, false, false));
    graph.retain(|node, _| node != "module_graph");
    graph
}

/// A cycle in `graph`, if there is one.
fn find_cycle(graph: &Graph) -> Option<Vec<String>> {
    fn visit(
        node: &str,
        graph: &Graph,
        path: &mut Vec<String>,
        done: &mut BTreeSet<String>,
    ) -> Option<Vec<String>> {
        if let Some(at) = path.iter().position(|n| n == node) {
            let mut cycle = path[at..].to_vec();
            cycle.push(node.to_string());
            return Some(cycle);
        }
        if done.contains(node) {
            return None;
        }
        path.push(node.to_string());
        for next in graph.get(node).into_iter().flatten() {
            if let Some(cycle) = visit(next, graph, path, done) {
                return Some(cycle);
            }
        }
        path.pop();
        done.insert(node.to_string());
        None
    }
    let mut done = BTreeSet::new();
    graph
        .keys()
        .find_map(|node| visit(node, graph, &mut Vec::new(), &mut done))
}

#[test]
fn actor_modules_depend_on_each_other_one_way() {
    let graph = graph();
    assert!(graph["session"].contains("messages::registry"));
    assert!(graph["services"].contains("registry"));
    if let Some(cycle) = find_cycle(&graph) {
        panic!(
            "actor modules import each other in a circle: {}\n{graph:#?}",
            cycle.join(" -> ")
        );
    }
}

#[test]
fn messages_name_no_actor() {
    let graph = graph();
    for (node, edges) in graph.iter().filter(|(n, _)| n.starts_with("messages::")) {
        for edge in edges {
            assert!(
                edge.starts_with("messages::") || edge == "outbound",
                "{node} depends on {edge}: messages may name only other messages and the outbound handle"
            );
        }
    }
}

#[test]
fn the_detector_finds_a_planted_cycle() {
    let mut graph = Graph::new();
    graph.insert("a".into(), ["b".to_string()].into());
    graph.insert("b".into(), ["c".to_string()].into());
    graph.insert("c".into(), ["a".to_string()].into());
    assert_eq!(
        find_cycle(&graph),
        Some(vec!["a".into(), "b".into(), "c".into(), "a".into()])
    );
    assert_eq!(
        heads(" {activity_log::{Entry, Query}, registry}; "),
        vec![
            vec!["activity_log", "Entry"],
            vec!["activity_log", "Query"],
            vec!["registry"]
        ]
    );
}

#[test]
#[ignore = "prints the graph for docs/architecture.md"]
fn print_graph() {
    for (node, edges) in graph() {
        println!(
            "{node} -> {}",
            edges.into_iter().collect::<Vec<_>>().join(", ")
        );
    }
}
