//! A review's title and the commit message it suggests.

/// The heading text of a markdown line (`## Summary` → `Summary`), if it is one.
fn heading(line: &str) -> Option<&str> {
    let trimmed = line.trim_start();
    let text = trimmed.trim_start_matches('#');
    let level = trimmed.len() - text.len();
    ((1..=6).contains(&level) && (text.is_empty() || text.starts_with(' ')))
        .then(|| text.trim().trim_end_matches('#').trim())
}

/// The review's title: its first heading, else its first non-empty line.
pub fn title(markdown: &str) -> String {
    let first = markdown
        .lines()
        .find_map(heading)
        .filter(|t| !t.is_empty())
        .or_else(|| markdown.lines().map(str::trim).find(|l| !l.is_empty()))
        .unwrap_or("Review");
    first.chars().take(200).collect()
}

/// The commit message a review suggests: its title, a blank line, and the text of its
/// section headed "Summary" (any level, any case), else the first paragraph after the
/// title. Lines keep their markdown; runs of blank lines become one.
pub fn commit_message(markdown: &str) -> String {
    let title = title(markdown);
    let lines: Vec<&str> = markdown.lines().collect();
    let summary_at = lines
        .iter()
        .position(|l| heading(l).is_some_and(|h| h.eq_ignore_ascii_case("summary")));
    let body: Vec<&str> = match summary_at {
        Some(at) => lines[at + 1..]
            .iter()
            .take_while(|l| heading(l).is_none())
            .copied()
            .collect(),
        None => {
            // After the line the title came from, the first paragraph.
            let start = lines
                .iter()
                .position(|l| {
                    heading(l).map(str::trim) == Some(title.as_str()) || l.trim() == title
                })
                .map_or(0, |i| i + 1);
            lines[start..]
                .iter()
                .skip_while(|l| l.trim().is_empty())
                .take_while(|l| !l.trim().is_empty() && heading(l).is_none())
                .copied()
                .collect()
        }
    };
    let mut text = String::new();
    let mut blank = false;
    for line in body {
        if line.trim().is_empty() {
            blank = !text.is_empty();
            continue;
        }
        if blank {
            text.push('\n');
            blank = false;
        }
        text.push_str(line.trim_end());
        text.push('\n');
    }
    let text = text.trim_end();
    if text.is_empty() {
        title
    } else {
        format!("{title}\n\n{text}")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_summary_section_follows_the_title() {
        let review = "# Make the parser strict\n\nIntro.\n\n## Summary\n\nRejects `a.rs:3` input.\n\n\nAlso docs.\n\n## Details\n\nlots";
        assert_eq!(
            commit_message(review),
            "Make the parser strict\n\nRejects `a.rs:3` input.\n\nAlso docs."
        );
    }

    #[test]
    fn without_a_summary_the_first_paragraph_serves() {
        assert_eq!(
            commit_message("## Fix the loop\nIt ran twice.\nNow once.\n\nMore."),
            "Fix the loop\n\nIt ran twice.\nNow once."
        );
        assert_eq!(commit_message("Just a line"), "Just a line");
        assert_eq!(title("\n\n#NotAHeading\n"), "#NotAHeading");
    }
}
