//! A tool that asks, mid-call, the user for a form (elicitation) and the client's model for
//! text (sampling), in both protocol eras: as nested requests in 2025-11-25, as rounds of
//! input in 2026-07-28. The client's handlers answer both; the tool's code is the same.
//!
//! Run: `cargo run --features client --example sampling_and_elicitation`

use actix_mcp::ErrorObject;
use actix_mcp::client::{Client, Lifecycle};
use actix_mcp::prelude::*;
use actix_mcp::protocol::{
    CreateMessageRequestParams, CreateMessageResult, ElicitResult, SamplingMessage,
};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

/// The form the tool asks the user to fill in.
#[derive(Serialize, Deserialize, JsonSchema)]
struct Trip {
    /// Where to go.
    destination: String,
    /// For how many days.
    days: u32,
}

/// Asks the user where to go, then the model for a plan.
async fn plan_trip(cx: RequestContext) -> Result<String, McpError> {
    let trip = match cx.elicit_as::<Trip>("Where would you like to go?").await? {
        Elicited::Accepted(trip) => trip,
        Elicited::Declined | Elicited::Cancelled => return Ok("No trip, then.".into()),
    };
    let prompt = format!("Plan {} days in {}.", trip.days, trip.destination);
    let plan = cx
        .create_message(CreateMessageRequestParams::new(
            vec![SamplingMessage::user_text(prompt)],
            200,
        ))
        .await?;
    Ok(format!("{} suggests: {}", plan.model, plan.text_content()))
}

#[actix::main]
async fn main() -> Result<(), Box<dyn std::error::Error>> {
    let server = Server::builder("travel", "1.0.0")
        .tool(ToolDef::new("plan_trip", plan_trip))
        .build()?;
    for lifecycle in [Lifecycle::V2025, Lifecycle::V2026] {
        let client = Client::builder("traveller", "1.0.0")
            .lifecycle(lifecycle)
            // What the user types into the form.
            .elicitation(|_request, _cx| async {
                ElicitResult::accept(Trip {
                    destination: "Lisbon".into(),
                    days: 3,
                })
                .map_err(ErrorObject::internal)
            })
            // What the model answers.
            .sampling(|request, _cx| async move {
                let asked = request
                    .messages
                    .last()
                    .map(SamplingMessage::text_content)
                    .unwrap_or_default();
                Ok(CreateMessageResult::assistant_text(
                    "demo-model",
                    format!("{asked} A walking tour."),
                ))
            });
        let client = actix_mcp::testing::connect(&server, client).await?;
        let answer = client.call_tool("plan_trip", ()).await?;
        println!(
            "{}: {}",
            client.protocol_version().as_str(),
            answer.text_content()
        );
        client.close().await;
    }
    Ok(())
}
