//! steward's web layer: the HTTP app and server (`http`), the REST API
//! (`api`), the dashboard (`dashboard`), bodies read under a deadline
//! (`body`) and the JSON error all of them answer with (`error`), over the
//! core's services and the channels' routes.

// The 100-line limit is for production code; a test reads top to bottom.
#![cfg_attr(test, allow(clippy::too_many_lines))]

pub mod api;
pub mod body;
pub mod dashboard;
pub mod error;
pub mod http;
