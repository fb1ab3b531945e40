//! steward's web layer: the HTTP app and server (`http`), the REST API
//! (`api`), the dashboard (`dashboard`) and bodies read under a deadline
//! (`body`), over the core's services and the channels' routes.

pub mod api;
pub mod body;
pub mod dashboard;
pub mod http;
