//! The merchant's endpoint, from the environment: `MERCHANT_WEBHOOK_URL` (https, or
//! http to a loopback address), `MERCHANT_WEBHOOK_SECRET` (`whsec_…`, several during a
//! rotation), and how deliveries go — `MERCHANT_WEBHOOK_CONCURRENCY`,
//! `MERCHANT_WEBHOOK_TIMEOUT_MS`, `MERCHANT_WEBHOOK_RETRY_FIRST_MS`,
//! `MERCHANT_WEBHOOK_RETRY_MAX_MS`, `MERCHANT_WEBHOOK_GIVE_UP_AFTER_MS`. A bad value
//! refuses the start, the variable named.

use std::net::IpAddr;
use std::time::Duration;

use super::signature::Secrets;
use crate::policy::delivery::Schedule;
use crate::setting::whole_number;

#[derive(Clone)]
pub struct MerchantWebhooks {
    pub url: reqwest::Url,
    pub secrets: Secrets,
    /// Deliveries out at once (to different orders).
    pub concurrency: u32,
    /// How long a receiver has to answer.
    pub timeout: Duration,
    pub schedule: Schedule,
}

type Refusal = (&'static str, String);

impl MerchantWebhooks {
    /// `None` when `MERCHANT_WEBHOOK_URL` is not set: events are kept, for the pull API,
    /// and nothing is pushed.
    pub fn from_lookup(get: impl Fn(&str) -> Option<String>) -> Result<Option<Self>, Refusal> {
        let Some(url) = get("MERCHANT_WEBHOOK_URL") else {
            return Ok(None);
        };
        let url = endpoint(&url).map_err(|problem| ("MERCHANT_WEBHOOK_URL", problem))?;
        let secret = get("MERCHANT_WEBHOOK_SECRET").ok_or((
            "MERCHANT_WEBHOOK_SECRET",
            "is not set (MERCHANT_WEBHOOK_URL is): whsec_ and base64".to_owned(),
        ))?;
        let secrets =
            Secrets::parse(&secret).map_err(|problem| ("MERCHANT_WEBHOOK_SECRET", problem))?;
        let number = |name: &'static str, default: u64, min: u64, max: u64| {
            whole_number(get(name), name, default, min..=max)
        };
        let defaults = Schedule::default();
        let schedule = Schedule {
            first_ms: number(
                "MERCHANT_WEBHOOK_RETRY_FIRST_MS",
                defaults.first_ms,
                1,
                3_600_000,
            )?,
            max_ms: number(
                "MERCHANT_WEBHOOK_RETRY_MAX_MS",
                defaults.max_ms,
                1,
                86_400_000,
            )?,
            give_up_after_ms: number(
                "MERCHANT_WEBHOOK_GIVE_UP_AFTER_MS",
                defaults.give_up_after_ms,
                1_000,
                30 * 86_400_000,
            )?,
        };
        if schedule.max_ms < schedule.first_ms {
            return Err((
                "MERCHANT_WEBHOOK_RETRY_MAX_MS",
                "is below MERCHANT_WEBHOOK_RETRY_FIRST_MS".to_owned(),
            ));
        }
        Ok(Some(Self {
            url,
            secrets,
            concurrency: number("MERCHANT_WEBHOOK_CONCURRENCY", 32, 1, 1_000)? as u32,
            timeout: Duration::from_millis(number(
                "MERCHANT_WEBHOOK_TIMEOUT_MS",
                10_000,
                100,
                60_000,
            )?),
            schedule,
        }))
    }
}

/// An endpoint the origin may post to: https, or plain http to this machine only.
fn endpoint(value: &str) -> Result<reqwest::Url, String> {
    let url = reqwest::Url::parse(value).map_err(|err| format!("`{value}` is not a URL: {err}"))?;
    let host = url.host_str().unwrap_or_default();
    let bare = host.trim_start_matches('[').trim_end_matches(']');
    let loopback = bare == "localhost" || bare.parse::<IpAddr>().is_ok_and(|ip| ip.is_loopback());
    match url.scheme() {
        "https" if !host.is_empty() => Ok(url),
        "http" if loopback => Ok(url),
        "http" => Err(format!(
            "`{value}`: plain http only to a loopback address; use https"
        )),
        _ => Err(format!("`{value}` must be an https URL")),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const SECRET: &str = "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw";

    fn read(vars: &[(&str, &str)]) -> Result<Option<MerchantWebhooks>, Refusal> {
        MerchantWebhooks::from_lookup(|name| {
            vars.iter()
                .find(|(n, _)| *n == name)
                .map(|(_, v)| (*v).to_owned())
        })
    }

    #[test]
    fn unset_pushes_nothing_and_a_good_endpoint_is_taken() {
        assert!(read(&[]).expect("fine").is_none());
        for url in [
            "https://shop.example/hooks",
            "http://127.0.0.1:9000/h",
            "http://[::1]:80/",
            "http://localhost:1/",
        ] {
            let taken = read(&[
                ("MERCHANT_WEBHOOK_URL", url),
                ("MERCHANT_WEBHOOK_SECRET", SECRET),
            ]);
            assert!(matches!(taken, Ok(Some(_))), "{url}");
        }
    }

    #[test]
    fn each_bad_value_is_refused_by_its_name() {
        for (vars, name) in [
            (
                vec![
                    ("MERCHANT_WEBHOOK_URL", "http://shop.example/h"),
                    ("MERCHANT_WEBHOOK_SECRET", SECRET),
                ],
                "MERCHANT_WEBHOOK_URL",
            ),
            (
                vec![
                    ("MERCHANT_WEBHOOK_URL", "ftp://127.0.0.1/"),
                    ("MERCHANT_WEBHOOK_SECRET", SECRET),
                ],
                "MERCHANT_WEBHOOK_URL",
            ),
            (
                vec![
                    ("MERCHANT_WEBHOOK_URL", "not a url"),
                    ("MERCHANT_WEBHOOK_SECRET", SECRET),
                ],
                "MERCHANT_WEBHOOK_URL",
            ),
            (
                vec![("MERCHANT_WEBHOOK_URL", "https://shop.example/h")],
                "MERCHANT_WEBHOOK_SECRET",
            ),
            (
                vec![
                    ("MERCHANT_WEBHOOK_URL", "https://shop.example/h"),
                    ("MERCHANT_WEBHOOK_SECRET", "whsec_c2hvcnQ="),
                ],
                "MERCHANT_WEBHOOK_SECRET",
            ),
            (
                vec![
                    ("MERCHANT_WEBHOOK_URL", "https://shop.example/h"),
                    ("MERCHANT_WEBHOOK_SECRET", SECRET),
                    ("MERCHANT_WEBHOOK_CONCURRENCY", "0"),
                ],
                "MERCHANT_WEBHOOK_CONCURRENCY",
            ),
            (
                vec![
                    ("MERCHANT_WEBHOOK_URL", "https://shop.example/h"),
                    ("MERCHANT_WEBHOOK_SECRET", SECRET),
                    ("MERCHANT_WEBHOOK_RETRY_FIRST_MS", "9000"),
                    ("MERCHANT_WEBHOOK_RETRY_MAX_MS", "10"),
                ],
                "MERCHANT_WEBHOOK_RETRY_MAX_MS",
            ),
        ] {
            let refused = read(&vars).err().map(|(name, _)| name);
            assert_eq!(refused, Some(name), "{vars:?}");
        }
    }
}
