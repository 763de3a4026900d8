//! A review's markdown as HTML for the browser page: CommonMark (tables, strikethrough,
//! task lists) with every reference turned into a clickable element, and nothing the
//! review's author could use against the page: raw HTML is shown as text, links other
//! than `http(s)` ones lose their target, images become their alt text.

use pulldown_cmark::{html, CowStr, Event, Options, Parser, Tag, TagEnd};

use super::refs::{find, Found};

/// What an open link became, so that its end is rendered to match.
enum OpenLink {
    /// A reference: closed with `</a>`.
    Reference,
    /// An `http(s)` link, rendered by pulldown-cmark.
    Web,
    /// Anything else: its text is kept, the link dropped.
    Dropped,
}

fn open_reference(index: usize) -> CowStr<'static> {
    CowStr::from(format!(
        "<a class=\"ref\" href=\"#\" data-ref=\"{index}\" role=\"button\">"
    ))
}

/// Renders `markdown`; `reference` numbers a found reference (or refuses it, leaving
/// plain text). References inside a link's text are left alone (no nested links).
pub fn render(markdown: &str, mut reference: impl FnMut(&Found) -> Option<usize>) -> String {
    let options =
        Options::ENABLE_TABLES | Options::ENABLE_STRIKETHROUGH | Options::ENABLE_TASKLISTS;
    let mut out: Vec<Event<'_>> = Vec::new();
    let mut links: Vec<OpenLink> = Vec::new();
    let mut in_image = 0usize;
    for event in Parser::new_ext(markdown, options) {
        match event {
            Event::Html(raw) | Event::InlineHtml(raw) => out.push(Event::Text(raw)),
            Event::Start(Tag::Image { .. }) => in_image += 1,
            Event::End(TagEnd::Image) => in_image = in_image.saturating_sub(1),
            Event::Start(Tag::Link {
                link_type,
                dest_url,
                title,
                id,
            }) => {
                let whole = find(&dest_url)
                    .into_iter()
                    .find(|f| f.span == (0..dest_url.len()));
                if let Some(index) = whole.as_ref().and_then(&mut reference) {
                    out.push(Event::Html(open_reference(index)));
                    links.push(OpenLink::Reference);
                } else if dest_url.starts_with("https://") || dest_url.starts_with("http://") {
                    out.push(Event::Start(Tag::Link {
                        link_type,
                        dest_url,
                        title,
                        id,
                    }));
                    links.push(OpenLink::Web);
                } else {
                    links.push(OpenLink::Dropped);
                }
            }
            Event::End(TagEnd::Link) => match links.pop() {
                Some(OpenLink::Reference) => out.push(Event::Html("</a>".into())),
                Some(OpenLink::Web) => out.push(Event::End(TagEnd::Link)),
                Some(OpenLink::Dropped) | None => {}
            },
            Event::Text(text) if links.is_empty() && in_image == 0 => {
                linkify(&text, &mut reference, &mut out)
            }
            Event::Code(code) if links.is_empty() => {
                let found = find(&code);
                match found.first().and_then(&mut reference) {
                    Some(index) => {
                        out.push(Event::Html(open_reference(index)));
                        out.push(Event::Code(code));
                        out.push(Event::Html("</a>".into()));
                    }
                    None => out.push(Event::Code(code)),
                }
            }
            other => out.push(other),
        }
    }
    let mut html_out = String::with_capacity(markdown.len() * 3 / 2);
    html::push_html(&mut html_out, out.into_iter());
    html_out
}

/// Pushes `text` with each accepted reference wrapped in a reference element.
fn linkify(
    text: &str,
    reference: &mut impl FnMut(&Found) -> Option<usize>,
    out: &mut Vec<Event<'_>>,
) {
    let wrap = |s: &str| Event::Text(CowStr::from(s.to_string()));
    let mut at = 0;
    for found in find(text) {
        let Some(index) = reference(&found) else {
            continue;
        };
        if found.span.start > at {
            out.push(wrap(&text[at..found.span.start]));
        }
        out.push(Event::Html(open_reference(index)));
        out.push(wrap(&text[found.span.clone()]));
        out.push(Event::Html("</a>".into()));
        at = found.span.end;
    }
    if at < text.len() {
        out.push(wrap(&text[at..]));
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn all(_: &Found) -> Option<usize> {
        Some(7)
    }

    #[test]
    fn references_in_text_code_and_links_become_reference_elements() {
        let html = render("See src/a.rs:3 and `b.rs:4-5` and [here](src/c.rs:9).", all);
        assert_eq!(html.matches("class=\"ref\"").count(), 3, "{html}");
        assert!(html.contains("<code>b.rs:4-5</code>"), "{html}");
        assert!(html.contains(">src/a.rs:3</a>"), "{html}");
    }

    #[test]
    fn refused_references_stay_text() {
        let html = render("See src/a.rs:3.", |_| None);
        assert!(!html.contains("class=\"ref\""), "{html}");
        assert!(html.contains("src/a.rs:3"), "{html}");
    }

    #[test]
    fn raw_html_scripts_and_odd_links_are_disarmed() {
        let html = render(
            "<script>alert(1)</script>\n\nx <img src=x onerror=alert(1)> [y](javascript:alert(1)) ![z](http://evil/x.png) [w](https://example.com/)",
            all,
        );
        assert!(!html.contains("<script"), "{html}");
        assert!(!html.contains("<img"), "{html}");
        assert!(html.contains("&lt;script&gt;"), "{html}");
        assert!(!html.contains("javascript:"), "{html}");
        assert!(html.contains("href=\"https://example.com/\""), "{html}");
        assert!(html.contains('z'), "the image's alt text stays: {html}");
    }
}
