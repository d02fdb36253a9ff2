//! The tour (`examples/tour.rs`, the README's first command) sells the product one screen per
//! stop: each stop prints at most `MAX_LINES` lines, heading included, ends with a result to
//! check against its code, and names the line of the tour its code starts at.

#[path = "../../examples/tour.rs"]
mod example;

const SOURCE: &str = include_str!("../../examples/tour.rs");

#[test]
#[cfg_attr(
    miri,
    ignore = "the tour times 100,000-particle passes: minutes under Miri; the core's tests cover its code"
)]
fn every_stop_fits_one_screen_and_gives_a_result_to_check() {
    let mut total = 0;
    for stop in example::STOPS {
        let s = stop();
        let shown = 1 + s.lines.len();
        assert!(
            shown <= example::MAX_LINES,
            "`{}` prints {shown} lines:\n{}",
            s.title,
            s.lines.join("\n")
        );
        assert!(
            s.lines.iter().any(|l| l.starts_with("check: ")),
            "`{}` gives no result to check",
            s.title
        );
        // The heading's line number is inside the stop's function, just below its `fn`.
        let line = s.line as usize;
        let start = SOURCE.lines().take(line).collect::<Vec<_>>();
        assert!(
            start.iter().rev().take(4).any(|l| l.starts_with("fn ")),
            "`{}` points at examples/tour.rs:{line}",
            s.title
        );
        total += shown;
    }
    assert!(total <= 10 * example::MAX_LINES, "{total} lines in all");
}

#[test]
#[cfg_attr(
    miri,
    ignore = "the tour times 100,000-particle passes: minutes under Miri; the core's tests cover its code"
)]
fn the_whole_tour_runs_and_names_every_stop() {
    let text = example::run();
    let headings: Vec<&String> = text.iter().filter(|l| l.starts_with("== ")).collect();
    assert_eq!(headings.len(), example::STOPS.len());
    let first = format!("== 1/{}: ", example::STOPS.len());
    assert!(headings[0].starts_with(&first) && headings[0].contains("examples/tour.rs:"));
    // The compile errors shown are the ones trybuild checks, verbatim.
    let joined = text.join("\n");
    assert!(joined.contains(include_str!("../ui/layout-optimal.stderr").trim_end()));
    assert!(joined.contains(include_str!("../ui/arena-use-after-reset.stderr").trim_end()));
    assert!(!joined.to_lowercase().contains("seed"));
}

#[test]
#[cfg_attr(
    miri,
    ignore = "the tour times 100,000-particle passes: minutes under Miri; the core's tests cover its code"
)]
fn the_tour_fits_a_terminal_and_names_only_real_ui_cases() {
    let stderr = [
        include_str!("../ui/layout-optimal.stderr"),
        include_str!("../ui/arena-use-after-reset.stderr"),
    ];
    let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR"));
    for line in example::run() {
        // Only the compiler's own lines, shown verbatim, may be wider than 100 columns.
        assert!(
            line.chars().count() <= 100 || stderr.iter().any(|e| e.contains(line.as_str())),
            "{} columns: {line}",
            line.chars().count()
        );
        for (at, _) in line.match_indices("tests/ui/") {
            let path: String = line[at..]
                .chars()
                .take_while(|c| c.is_alphanumeric() || "/-_.".contains(*c))
                .collect();
            let path = path.trim_end_matches(['.', ':']);
            assert!(root.join(path).is_file(), "the tour names {path}");
        }
    }
}
