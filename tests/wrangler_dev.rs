//! The one end-to-end test through `wrangler dev`, the way `make run` serves the edge
//! (wrangler's build command, its proxy in front of workerd, `--env-file` variables):
//! a login, who-am-I and one payment confirm. Every other test runs the edge under
//! `workerd serve`.

use crate::support;

use reqwest::StatusCode;
use serde_json::{json, Value};
use support::{order_body, System};

#[tokio::test]
async fn a_login_who_am_i_and_a_confirm_through_wrangler_dev() {
    let system = System::start_under_wrangler_dev().await;
    let alice = system.add_user("alice", "alice-password");

    let login = system
        .http
        .post(format!("{}/auth/login", system.edge))
        .json(&json!({ "username": "alice", "password": "alice-password" }))
        .send()
        .await
        .expect("the edge answers");
    assert_eq!(login.status(), StatusCode::OK);
    let tokens: Value = login.json().await.expect("a JSON body");
    let access = tokens["accessToken"].as_str().expect("an access token");

    let me = system
        .http
        .get(format!("{}/auth/me", system.edge))
        .bearer_auth(access)
        .send()
        .await
        .expect("the edge answers");
    assert_eq!(me.status(), StatusCode::OK);
    let who: Value = me.json().await.expect("a JSON body");
    assert_eq!(who["sub"], alice.as_str());

    let confirm = system
        .http
        .post(format!("{}/payments/confirm", system.edge))
        .bearer_auth(access)
        .header("idempotency-key", "key-wrangler-1")
        .header("content-type", "application/json")
        .body(order_body("order-wrangler-1"))
        .send()
        .await
        .expect("the edge answers");
    assert_eq!(confirm.status(), StatusCode::CREATED);
    let payment: Value = confirm.json().await.expect("a JSON body");
    assert_eq!(payment["status"], "APPROVED");
    assert_eq!(payment["orderId"], "order-wrangler-1");
}
