//! A drop run from the operator console alone, in Debian's headless Chromium
//! (`tests/browser/console_drop.mjs`, keyboard first): defined (a bad setting refused at
//! its field first), people entering seen live, paused, a change from a stale page
//! refused, resumed and closed. After each step the console's view is checked against
//! the room as the edge has it — its report, and what people in line are told — and
//! nothing else reaches the room. Screenshots of each state at 1280 and 768 px are kept
//! in `target/test-artifacts/console-drop/`.

use crate::support;

use std::io::{BufRead, BufReader, Write};
use std::path::Path;
use std::process::{ChildStdin, Command, Stdio};

use reqwest::StatusCode;
use serde_json::{json, Value};
use support::room::{admin, enter, leave, room_status, start, status_until};
use support::OPERATOR_TOKEN;

const EVENT: &str = "spring";

/// The value of `name=` in a line the browser printed: up to the next ` word=`.
fn shown<'a>(line: &'a str, name: &str) -> &'a str {
    let start = line
        .find(&format!(" {name}="))
        .map(|at| at + name.len() + 2)
        .unwrap_or_else(|| panic!("no {name} in {line}"));
    let rest = &line[start..];
    let next_name = rest.match_indices(' ').map(|(at, _)| at).find(|&at| {
        let word = &rest[at + 1..];
        let letters = word.bytes().take_while(u8::is_ascii_alphabetic).count();
        letters > 0 && word[letters..].starts_with('=')
    });
    &rest[..next_name.unwrap_or(rest.len())]
}

/// `ms` as the console shows a time to an operator in Seoul (en-US): "Dec 5, 2026,
/// 03:41:07 GMT+9".
fn in_seoul(ms: i64) -> String {
    use chrono::{Datelike as _, Timelike as _};
    const MONTHS: [&str; 12] = [
        "Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec",
    ];
    let seoul = chrono::FixedOffset::east_opt(9 * 3600).expect("UTC+9");
    let at = chrono::DateTime::from_timestamp_millis(ms)
        .expect("a time")
        .with_timezone(&seoul);
    format!(
        "{} {}, {}, {:02}:{:02}:{:02} GMT+9",
        MONTHS[at.month0() as usize],
        at.day(),
        at.year(),
        at.hour(),
        at.minute(),
        at.second()
    )
}

fn tell(stdin: &mut ChildStdin, word: &str) {
    writeln!(stdin, "{word}").expect("the browser script reads its word");
}

/// The room's figures as the console must show them, from the edge's report.
fn agrees(line: &str, report: &Value, state: &str) {
    assert_eq!(shown(line, "state"), state, "{line}");
    assert_eq!(
        shown(line, "version"),
        report["version"].to_string(),
        "{line} / {report}"
    );
    assert_eq!(
        shown(line, "waiting"),
        report["waiting"].to_string(),
        "{line} / {report}"
    );
    assert_eq!(
        shown(line, "passesLive"),
        format!("{} of {}", report["passesLive"], report["admitLimit"]),
        "{line} / {report}"
    );
}

#[tokio::test]
async fn an_operator_runs_a_drop_from_the_console_alone() {
    let system = start(&[("RATE_LIMITED_ROUTES", "none")]).await;
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let shots = root.join("target/test-artifacts/console-drop");
    let _ = std::fs::remove_dir_all(&shots);
    std::fs::create_dir_all(&shots).expect("a screenshot folder");
    let mut browser = Command::new("node")
        .arg(root.join("tests/browser/console_drop.mjs"))
        .arg(format!("{}/admin/console", system.origin_admin))
        .arg(OPERATOR_TOKEN)
        .arg(&shots)
        .arg(EVENT)
        .current_dir(root)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .spawn()
        .expect("node starts the browser script");
    let mut stdin = browser.stdin.take().expect("its stdin");
    let mut lines = BufReader::new(browser.stdout.take().expect("its stdout")).lines();
    let mut next = move || lines.next().and_then(Result::ok).unwrap_or_default();

    let invalid = next();
    assert!(
        invalid.starts_with("INVALID focus=drop-admitLimit invalid=true admitLimit: must be"),
        "{invalid}"
    );
    let defined = next();
    assert!(defined.starts_with("DEFINED"), "{defined}");
    let report = room_status(&system, EVENT).await;
    agrees(&defined, &report, "Open");
    // The opening typed in Seoul's wall-clock time is the instant the room opens at,
    // and the console shows it in Seoul's time, the zone named.
    let typed: i64 = shown(&defined, "typedOpensAt").parse().expect("an instant");
    assert_eq!(report["opensAt"], typed, "{report}");
    assert_eq!(shown(&defined, "opensAt"), in_seoul(typed), "{defined}");
    assert_eq!(shown(&defined, "price"), "₩5,000", "{defined}");
    assert!(
        defined.ends_with("priceShown=Shown to buyers as ₩5,000."),
        "{defined}"
    );

    // Five people enter the prequeue through the edge.
    let tokens: Vec<String> = (0..5)
        .map(|n| system.token(&format!("buyer-{n}"), 600))
        .collect();
    for token in &tokens {
        let placed = enter(&system, token, EVENT).await;
        assert_eq!(placed["prequeued"], true, "{placed}");
    }
    tell(&mut stdin, "ENTERED");
    let prequeued = next();
    assert!(prequeued.starts_with("PREQUEUED"), "{prequeued}");
    let report = room_status(&system, EVENT).await;
    assert_eq!(
        shown(&prequeued, "prequeued"),
        report["prequeued"].to_string()
    );

    // At the opening: the list the console shows is the room's drawn order.
    let drawn = next();
    assert!(drawn.starts_with("DRAWN"), "{drawn}");
    let (status, list) = admin(&system, reqwest::Method::GET, &format!("/{EVENT}/draw")).await;
    assert_eq!(status, StatusCode::OK, "{list}");
    let people: Vec<&str> = list["people"]
        .as_array()
        .expect("the drawn people")
        .iter()
        .filter_map(Value::as_str)
        .collect();
    assert_eq!(shown(&drawn, "users"), people.join(","), "{list}");
    let seed = list["drawSeed"].as_str().expect("a seed");
    assert!(
        shown(&drawn, "summary").contains(&format!("with seed {seed}: 5 placed.")),
        "{drawn}"
    );
    let buyer = |place: usize| -> &String {
        let n: usize = people[place]
            .trim_start_matches("buyer-")
            .parse()
            .expect("a buyer");
        &tokens[n]
    };
    // Two passes, three waiting, in the drawn order.
    for place in 0..5 {
        status_until(&system, buyer(place), EVENT, |s| {
            s["admitted"] == (place < 2)
        })
        .await;
    }
    let live = next();
    assert!(live.starts_with("LIVE"), "{live}");
    agrees(&live, &room_status(&system, EVENT).await, "Open");
    assert_eq!(shown(&live, "issued"), "2 of no limit", "{live}");

    tell(&mut stdin, "PAUSE");
    let confirm = next();
    assert!(confirm.contains("No new pass is issued"), "{confirm}");
    let paused = next();
    assert!(paused.starts_with("PAUSED"), "{paused}");
    let report = room_status(&system, EVENT).await;
    assert_eq!(report["paused"], true, "{report}");
    agrees(&paused, &report, "Paused");
    // Held: a pass given back frees nobody, and the line is told it is paused.
    leave(&system, buyer(0), EVENT).await;
    let third = status_until(&system, buyer(2), EVENT, |s| s["paused"] == true).await;
    assert_eq!(third["admitted"], false, "{third}");

    tell(&mut stdin, "CHANGE");
    let editing = next();
    let version: u64 = shown(&editing, "version").parse().expect("a version");
    // Another operator changes the drop meanwhile.
    let (status, changed) = system
        .set_event(json!({
            "eventId": EVENT, "stock": 100, "amount": 5000, "admitLimit": 3,
            "passTtlSeconds": 600, "name": "Spring drop", "opensAt": typed,
            "expectedVersion": version,
        }))
        .await;
    assert_eq!(status, StatusCode::OK, "{changed}");
    tell(&mut stdin, "CHANGED");
    let stale = next();
    assert!(
        stale.starts_with(&format!(
            "STALE Refused: another operator changed this drop since this page showed version {version}"
        )) && stale.contains(&format!("version {}", version + 1)),
        "{stale}"
    );
    let report = room_status(&system, EVENT).await;
    assert_eq!(
        report["version"],
        version + 1,
        "the stale change reached the room: {report}"
    );
    let (_, event) = admin(&system, reqwest::Method::GET, &format!("/{EVENT}")).await;
    assert_eq!(event["room"]["settings"]["name"], "Spring drop", "{event}");

    tell(&mut stdin, "RESUME");
    let confirm = next();
    assert!(confirm.contains("Passes are issued again"), "{confirm}");
    let resumed = next();
    // Open again, with three passes at once: the next two in drawn order get one.
    for place in 2..4 {
        status_until(&system, buyer(place), EVENT, |s| s["admitted"] == true).await;
    }
    let report = room_status(&system, EVENT).await;
    assert_eq!(report["paused"], false, "{report}");
    assert_eq!(shown(&resumed, "state"), "Open", "{resumed}");
    assert_eq!(
        shown(&resumed, "version"),
        report["version"].to_string(),
        "{resumed}"
    );

    tell(&mut stdin, "CLOSE");
    let refused = next();
    assert_eq!(
        refused,
        format!("CLOSE-REFUSED Type {EVENT} exactly to close it.")
    );
    let confirm = next();
    assert!(confirm.contains("cannot be undone"), "{confirm}");
    let closed = next();
    assert!(closed.starts_with("CLOSED"), "{closed}");
    assert!(closed.ends_with("disabledControls=4"), "{closed}");
    let report = room_status(&system, EVENT).await;
    assert_eq!(report["closed"], true, "{report}");
    assert_eq!(
        shown(&closed, "version"),
        report["version"].to_string(),
        "{closed}"
    );
    // A newcomer is turned away by the edge.
    let late = enter(&system, &system.token("buyer-late", 600), EVENT).await;
    assert_eq!(
        (late["closed"].as_bool(), late["position"].as_u64()),
        (Some(true), Some(0)),
        "{late}"
    );

    tell(&mut stdin, "DONE");
    drop(stdin);
    assert_eq!(next(), "END");
    assert!(browser.wait().expect("the browser script ends").success());
    for state in [
        "defined",
        "prequeued",
        "drawn",
        "live",
        "paused",
        "stale",
        "resumed",
        "closed",
    ] {
        for width in [1280, 768] {
            let shot = shots.join(format!("{state}-{width}.png"));
            assert!(shot.exists(), "no screenshot at {}", shot.display());
        }
    }
}
