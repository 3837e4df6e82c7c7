//! `origin event create|update|show|pause|resume|close`: a drop from the command line,
//! through the running origin's operator routes (`ORIGIN_ADMIN_URL`, by default
//! `http://` + `ORIGIN_ADMIN_LISTEN`; `OPERATOR_TOKEN`), so it is checked, stored and
//! handed to the edge exactly as `POST /admin/events` does. Prints the answer as JSON.

use anyhow::{bail, Context as _};
use clap::{Args, Subcommand};
use serde_json::{json, Value};

#[derive(Subcommand)]
pub enum EventCommand {
    /// Define a new event (fails if it exists).
    Create(EventArgs),
    /// Change an event: what is not given stays as it is.
    Update(EventArgs),
    /// The event, its room and the room's report.
    Show {
        event_id: String,
    },
    /// No new pass until resumed; live passes keep working, places are kept.
    Pause {
        event_id: String,
    },
    Resume {
        event_id: String,
    },
    /// End the drop: newcomers are turned away, no new pass.
    Close {
        event_id: String,
    },
}

#[derive(Args)]
pub struct EventArgs {
    event_id: String,
    #[arg(long)]
    stock: Option<i64>,
    /// The price every confirm for the event must pay.
    #[arg(long)]
    amount: Option<i64>,
    /// Confirms need a pass (`--gated true|false`).
    #[arg(long)]
    gated: Option<bool>,
    /// Passes live at once.
    #[arg(long)]
    admit_limit: Option<u32>,
    /// New passes per minute.
    #[arg(long)]
    admit_per_minute: Option<u32>,
    #[arg(long)]
    pass_ttl_seconds: Option<u32>,
    /// The opening: RFC 3339 (2026-12-24T18:00:00Z) or epoch ms.
    #[arg(long, value_parser = moment)]
    opens_at: Option<i64>,
    /// From when people may enter the prequeue: RFC 3339 or epoch ms.
    #[arg(long, value_parser = moment)]
    prequeue_from: Option<i64>,
    /// The event's name, for the waiting-room page.
    #[arg(long)]
    name: Option<String>,
    /// The arrival shards its enters are spread over (fixed once the room is defined).
    #[arg(long, conflicts_with = "expected_arrivals_per_minute")]
    shards: Option<u32>,
    /// Instead of `--shards`: the arrivals a minute expected, for ⌈per second / 250⌉.
    #[arg(long)]
    expected_arrivals_per_minute: Option<u64>,
}

/// A moment given as RFC 3339 or epoch milliseconds.
fn moment(text: &str) -> Result<i64, String> {
    if let Ok(ms) = text.parse::<i64>() {
        return Ok(ms);
    }
    chrono::DateTime::parse_from_rfc3339(text)
        .map(|at| at.timestamp_millis())
        .map_err(|err| format!("not RFC 3339 nor epoch ms: {err}"))
}

/// The room's fields of the operator API, by their flags.
const ROOM_FIELDS: [&str; 9] = [
    "gated",
    "admitLimit",
    "admitPerMinute",
    "passTtlSeconds",
    "opensAt",
    "prequeueFrom",
    "name",
    "shards",
    "expectedArrivalsPerMinute",
];

impl EventArgs {
    /// The fields given, by their API names.
    fn given(&self) -> serde_json::Map<String, Value> {
        let values = [
            ("stock", self.stock.map(Value::from)),
            ("amount", self.amount.map(Value::from)),
            ("gated", self.gated.map(Value::from)),
            ("admitLimit", self.admit_limit.map(Value::from)),
            ("admitPerMinute", self.admit_per_minute.map(Value::from)),
            ("passTtlSeconds", self.pass_ttl_seconds.map(Value::from)),
            ("opensAt", self.opens_at.map(Value::from)),
            ("prequeueFrom", self.prequeue_from.map(Value::from)),
            ("name", self.name.clone().map(Value::from)),
            ("shards", self.shards.map(Value::from)),
            (
                "expectedArrivalsPerMinute",
                self.expected_arrivals_per_minute.map(Value::from),
            ),
        ];
        values
            .into_iter()
            .filter_map(|(name, value)| Some((name.to_owned(), value?)))
            .collect()
    }
}

struct Operator {
    url: String,
    token: String,
    http: reqwest::Client,
}

impl Operator {
    fn from_env() -> anyhow::Result<Self> {
        let url = match std::env::var("ORIGIN_ADMIN_URL") {
            Ok(url) => url,
            Err(_) => format!(
                "http://{}",
                std::env::var("ORIGIN_ADMIN_LISTEN").unwrap_or_else(|_| "127.0.0.1:8081".into())
            ),
        };
        let token = std::env::var("OPERATOR_TOKEN")
            .context("OPERATOR_TOKEN is not set: the operator routes need it")?;
        Ok(Operator {
            url: url.trim_end_matches('/').to_owned(),
            token,
            http: reqwest::Client::new(),
        })
    }

    async fn call(&self, request: reqwest::RequestBuilder) -> anyhow::Result<(u16, Value)> {
        let answer = request
            .bearer_auth(&self.token)
            .send()
            .await
            .with_context(|| format!("calling the origin's operator routes at {}", self.url))?;
        let status = answer.status().as_u16();
        Ok((status, answer.json().await.unwrap_or(Value::Null)))
    }

    async fn event(&self, event_id: &str) -> anyhow::Result<Option<Value>> {
        let url = format!("{}/admin/events/{event_id}", self.url);
        match self.call(self.http.get(url)).await? {
            (200, event) => Ok(Some(event)),
            (404, _) => Ok(None),
            (status, body) => bail!("the origin answered {status}: {body}"),
        }
    }

    async fn post(&self, path: &str, body: Value) -> anyhow::Result<Value> {
        let url = format!("{}/admin/events{path}", self.url);
        match self.call(self.http.post(url).json(&body)).await? {
            (200, answer) => Ok(answer),
            (status, body) => bail!("the origin answered {status}: {body}"),
        }
    }
}

pub async fn run(command: EventCommand) -> anyhow::Result<()> {
    let operator = Operator::from_env()?;
    let answer = match command {
        EventCommand::Create(args) => {
            if operator.event(&args.event_id).await?.is_some() {
                bail!(
                    "event {} exists: change it with `origin event update`",
                    args.event_id
                );
            }
            let mut body = args.given();
            body.insert("eventId".into(), args.event_id.clone().into());
            operator.post("", Value::Object(body)).await?
        }
        EventCommand::Update(args) => {
            let Some(event) = operator.event(&args.event_id).await? else {
                bail!(
                    "no event {}: define it with `origin event create`",
                    args.event_id
                );
            };
            operator.post("", updated(&event, &args)).await?
        }
        EventCommand::Show { event_id } => operator
            .event(&event_id)
            .await?
            .with_context(|| format!("no event {event_id}"))?,
        EventCommand::Pause { event_id } => {
            operator
                .post(&format!("/{event_id}/pause"), json!({}))
                .await?
        }
        EventCommand::Resume { event_id } => {
            operator
                .post(&format!("/{event_id}/resume"), json!({}))
                .await?
        }
        EventCommand::Close { event_id } => {
            operator
                .post(&format!("/{event_id}/close"), json!({}))
                .await?
        }
    };
    println!("{}", serde_json::to_string_pretty(&answer)?);
    Ok(())
}

/// The body that changes `event` (as `GET /admin/events/{id}` shows it) by what `args`
/// give: stock and price kept unless given, the room's settings kept field by field.
fn updated(event: &Value, args: &EventArgs) -> Value {
    let given = args.given();
    let mut body = json!({
        "eventId": args.event_id,
        "stock": event["stock"],
        "amount": event["amount"],
    });
    let room_given = ROOM_FIELDS.iter().any(|field| given.contains_key(*field));
    if room_given {
        if let Some(stored) = event["room"]["settings"].as_object() {
            for (name, value) in stored {
                body[name] = value.clone();
            }
        }
    }
    if given.contains_key("expectedArrivalsPerMinute") {
        // The shards follow from it: the stored count is not given beside it.
        if let Some(fields) = body.as_object_mut() {
            fields.remove("shards");
        }
    }
    for (name, value) in given {
        body[name] = value;
    }
    body
}

#[cfg(test)]
mod tests {
    use super::*;

    fn args(extra: &[&str]) -> EventArgs {
        #[derive(clap::Parser)]
        struct Cli {
            #[command(flatten)]
            args: EventArgs,
        }
        let mut argv = vec!["event", "drop-1"];
        argv.extend(extra);
        <Cli as clap::Parser>::parse_from(argv).args
    }

    #[test]
    fn an_update_keeps_what_it_does_not_give_and_the_room_field_by_field() {
        let event = json!({
            "eventId": "drop-1", "stock": 100, "amount": 1000,
            "room": {"settings": {"gated": true, "admitLimit": 10, "name": "Spring"}, "state": "OPEN", "version": 2},
        });
        assert_eq!(
            updated(&event, &args(&["--stock", "120"])),
            json!({"eventId": "drop-1", "stock": 120, "amount": 1000}),
            "no room field given: the room is left as it is"
        );
        assert_eq!(
            updated(&event, &args(&["--admit-per-minute", "30"])),
            json!({"eventId": "drop-1", "stock": 100, "amount": 1000,
                   "gated": true, "admitLimit": 10, "name": "Spring", "admitPerMinute": 30})
        );
    }

    #[test]
    fn an_update_keeps_the_shards_unless_the_expected_rate_stands_for_them() {
        let event = json!({
            "eventId": "drop-1", "stock": 100, "amount": 1000,
            "room": {"settings": {"gated": true, "shards": 8}, "state": "OPEN", "version": 1},
        });
        assert_eq!(
            updated(&event, &args(&["--admit-limit", "5"]))["shards"],
            8,
            "kept: the room's shards are fixed"
        );
        let by_rate = updated(&event, &args(&["--expected-arrivals-per-minute", "60000"]));
        assert_eq!(
            (
                by_rate.get("shards"),
                by_rate["expectedArrivalsPerMinute"].clone()
            ),
            (None, json!(60000)),
            "the rate given stands for the shards"
        );
    }

    #[test]
    fn moments_are_rfc_3339_or_epoch_ms() {
        assert_eq!(moment("1796000000000"), Ok(1_796_000_000_000));
        assert_eq!(moment("2026-12-24T18:00:00Z"), Ok(1_798_135_200_000));
        assert!(moment("tomorrow").is_err());
    }
}
