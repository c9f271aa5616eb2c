//! Admission of requests into a session's in-flight table under concurrency: the same request
//! id arriving on several workers at the same moment is admitted exactly once.
#![allow(clippy::unwrap_used, missing_docs)]

mod support;

use std::collections::HashMap;
use std::sync::{Arc, Barrier};
use std::time::Duration;

use actix_mcp_actors::dev::{ChannelOutlet, Frame};
use serde_json::{Value, json};

use support::{Fake, eventually, open, registry, request, within};

const ROUNDS: i64 = 200;
const WORKERS: usize = 3;

#[actix_rt::test]
async fn the_same_id_on_several_workers_at_once_is_admitted_exactly_once() {
    let registry = registry(4, Some(Duration::from_millis(200)), None);
    let fake = Fake::default();
    let release = fake.release.clone();
    let session = open(&registry, "race", Arc::new(fake), None);
    let (outlet, mut rx) = ChannelOutlet::channel();
    let arbiters: Vec<_> = (0..WORKERS).map(|_| actix_rt::Arbiter::new()).collect();
    for round in 0..ROUNDS {
        // Every worker hands the same request to the session at the same moment.
        let barrier = Arc::new(Barrier::new(WORKERS + 1));
        for arbiter in &arbiters {
            let (session, outlet, barrier) = (session.clone(), outlet.clone(), barrier.clone());
            arbiter.spawn_fn(move || {
                barrier.wait();
                session.request(request(round, "wait", json!({})), outlet);
            });
        }
        barrier.wait();
    }
    // Each id is in flight once; every other copy was refused at once.
    let mut refusals: HashMap<i64, usize> = HashMap::new();
    let expected_refusals = (ROUNDS as usize) * (WORKERS - 1);
    for _ in 0..expected_refusals {
        let frame: Frame = within(rx.recv()).await.expect("open");
        let value: Value = serde_json::from_str(&frame.json).unwrap();
        assert_eq!(value["error"]["code"], json!(-32600), "{value}");
        *refusals.entry(value["id"].as_i64().unwrap()).or_default() += 1;
    }
    assert!(refusals.values().all(|n| *n == WORKERS - 1), "{refusals:?}");
    assert_eq!(refusals.len(), ROUNDS as usize);
    eventually("every admitted request to be in flight", || {
        session.in_flight() == ROUNDS as usize && registry.metrics().in_flight == ROUNDS as usize
    })
    .await;
    assert!(rx.try_recv().is_err(), "nothing else was answered yet");

    // Released, each admitted request answers exactly once, and the books balance.
    release.notify_waiters();
    let mut answered: HashMap<i64, usize> = HashMap::new();
    for _ in 0..ROUNDS {
        let frame = within(rx.recv()).await.expect("open");
        let value: Value = serde_json::from_str(&frame.json).unwrap();
        assert_eq!(value["result"], json!("released"), "{value}");
        *answered.entry(value["id"].as_i64().unwrap()).or_default() += 1;
    }
    assert_eq!(answered.len(), ROUNDS as usize);
    eventually("the gauges to return to zero", || {
        session.in_flight() == 0 && registry.metrics().in_flight == 0
    })
    .await;
    // With nothing in flight, the session is idle, and expires.
    eventually("the idle session to expire", || registry.is_empty()).await;
    assert!(!session.is_alive());
    for arbiter in arbiters {
        arbiter.stop();
    }
}
