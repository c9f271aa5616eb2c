#![cfg(feature = "otel")]
