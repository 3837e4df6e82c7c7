//! End to end: the waiting room's alarm chain, with nobody polling — a pass that ran out
//! admits the next in line at its end, by the room's alarm alone.

use crate::support;

use std::time::Duration;

use harness::signed::now_ms;
use serde_json::Value;
use support::room::{enter, leave, start, status};

/// The room's alarm chain holds with nobody polling. The first in line leaves before its
/// pass runs out, so the alarm set for that pass fires with nothing expired; it must
/// still set itself for the next pass, whose end admits the third person — at that end,
/// not when the third person next asks. (Any poll would expire passes itself, so nobody
/// polls: the test waits out the passes, then asks once.)
#[tokio::test]
async fn the_alarm_chain_admits_the_next_in_line_with_nobody_polling() {
    const TTL_MS: i64 = 8_000;
    let system = start(&[
        ("QUEUE_ADMIT_LIMIT", "1"),
        ("QUEUE_PASS_TTL_SECONDS", "8"),
        ("GATED_EVENTS", "drop-alarm"),
    ])
    .await;
    let [first, second, third] = ["user-1", "user-2", "user-3"].map(|u| system.token(u, 600));
    let entered = now_ms();
    for token in [&first, &second, &third] {
        enter(&system, token, "drop-alarm").await;
    }
    // The first leaves 3 s into its pass — more than the alarm's allowed lateness below,
    // so the first pass's alarm fires before the second's pass ends, with nothing expired.
    tokio::time::sleep(Duration::from_secs(3)).await;
    // The second's pass starts now and ends a TTL later; the alarm stays at the first's.
    leave(&system, &first, "drop-alarm").await;
    let second_pass_ends = now_ms() + TTL_MS;
    tokio::time::sleep(Duration::from_millis(
        u64::try_from(second_pass_ends - now_ms() + 4_000).unwrap(),
    ))
    .await;
    let asked = now_ms();
    let third_status: Value = status(&system, &third, "drop-alarm")
        .await
        .json()
        .await
        .unwrap();
    assert_eq!(third_status["admitted"], true, "{third_status}");
    let pass_ends = third_status["passExpiresAt"].as_i64().unwrap();
    println!(
        "entered at 0, asked at {} ms: the third's pass ends at {} ms",
        asked - entered,
        pass_ends - entered
    );
    // Issued by the alarm at the second's end, the third's pass ends 4 s after it was
    // asked about; issued by the poll, a whole TTL after. Halfway between allows the
    // alarm two seconds' lateness on a busy machine.
    assert!(
        pass_ends < asked + TTL_MS - 2_000,
        "the third's pass began when it asked ({} ms after), not when the second's ended",
        pass_ends - TTL_MS - entered
    );
}
