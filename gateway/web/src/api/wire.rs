//! The API's wire pieces: extractors whose refusals are JSON errors (a body
//! within `server.max_body_bytes`, a query, a path), one page of a list, and
//! times as ISO-8601.

use super::ApiState;
use crate::error::ApiError;
use axum::extract::{FromRequest, FromRequestParts, Request};
use axum::http::request::Parts;
use axum::response::{IntoResponse, Response};
use chrono::{DateTime, Utc};
use serde::de::DeserializeOwned;
use serde::Serialize;
use utoipa::ToSchema;

/// A JSON request body, read within `server.max_body_bytes` (413 beyond it)
/// and its deadline (408), parsed strictly (400 with serde's reason).
pub struct Body<T>(pub T);

impl<T: DeserializeOwned> FromRequest<ApiState> for Body<T> {
    type Rejection = Response;

    async fn from_request(req: Request, state: &ApiState) -> Result<Self, Response> {
        let bytes = crate::body::read_body(req.into_body(), &state.cfg.server).await?;
        json_object(&bytes)
            .map(Body)
            .map_err(IntoResponse::into_response)
    }
}

/// `bytes` as `T`, from one JSON object: serde would also read a struct from
/// an array of its fields in order, a form no body here is documented in.
fn json_object<T: DeserializeOwned>(bytes: &[u8]) -> Result<T, ApiError> {
    let malformed =
        |e: serde_json::Error| ApiError::bad_request(format!("malformed request body: {e}"));
    let value: serde_json::Value = serde_json::from_slice(bytes).map_err(malformed)?;
    if !value.is_object() {
        return Err(ApiError::bad_request(
            "malformed request body: expected a JSON object".to_string(),
        ));
    }
    T::deserialize(value).map_err(malformed)
}

/// A query string (400 with the reason when it does not fit `T`).
pub struct Query<T>(pub T);

impl<T: DeserializeOwned, S: Send + Sync> FromRequestParts<S> for Query<T> {
    type Rejection = ApiError;

    async fn from_request_parts(parts: &mut Parts, _: &S) -> Result<Self, ApiError> {
        serde_urlencoded::from_str(parts.uri.query().unwrap_or_default())
            .map(Query)
            .map_err(|e| ApiError::bad_request(format!("bad query: {e}")))
    }
}

/// Path parameters (400 with the reason when they do not fit `T`).
pub struct Path<T>(pub T);

impl<T: DeserializeOwned + Send, S: Send + Sync> FromRequestParts<S> for Path<T> {
    type Rejection = ApiError;

    async fn from_request_parts(parts: &mut Parts, state: &S) -> Result<Self, ApiError> {
        axum::extract::Path::<T>::from_request_parts(parts, state)
            .await
            .map(|axum::extract::Path(v)| Path(v))
            .map_err(|e| ApiError::bad_request(e.body_text()))
    }
}

/// One page of a list. Pass `next` as `cursor` for the page after it; `null`
/// when this is the last.
#[derive(Debug, Serialize, ToSchema)]
pub struct Page<T: ToSchema> {
    pub items: Vec<T>,
    /// The cursor of the next page, or null.
    pub next: Option<String>,
}

/// What every handler answers: its JSON, or the API's error.
pub type Reply<T> = Result<axum::Json<T>, ApiError>;

/// Rows a page has unless `limit` says otherwise, and at most.
pub const DEFAULT_LIMIT: i64 = 50;
pub const MAX_LIMIT: i64 = 200;

/// A page's size as asked: 1 to [`MAX_LIMIT`], [`DEFAULT_LIMIT`] when not given.
pub fn limit(asked: Option<i64>) -> Result<i64, ApiError> {
    limit_at_most(asked, MAX_LIMIT)
}

/// A page's size as asked: 1 to `max`, [`DEFAULT_LIMIT`] when not given.
pub fn limit_at_most(asked: Option<i64>, max: i64) -> Result<i64, ApiError> {
    match asked {
        None => Ok(DEFAULT_LIMIT),
        Some(n) if (1..=max).contains(&n) => Ok(n),
        Some(n) => Err(ApiError::bad_request(format!(
            "limit must be 1 to {max}, not {n}"
        ))),
    }
}

/// The page a list's query asks for, as [`page_query!`] declares it.
pub trait PageAsk {
    /// The largest page this list gives.
    const MAX_LIMIT: i64;
    /// `limit` as asked.
    fn asked_limit(&self) -> Option<i64>;
    /// `cursor` as given: the `next` of the page before.
    fn cursor(&self) -> Option<&str>;

    /// The page's size: 1 to [`Self::MAX_LIMIT`], [`DEFAULT_LIMIT`] when not given.
    fn page_size(&self) -> Result<i64, ApiError> {
        limit_at_most(self.asked_limit(), Self::MAX_LIMIT)
    }
}

/// A list's query string: its own filters, then the page's `limit` and
/// `cursor`, documented alike on every list. `by id`: the cursor is a row id
/// (newest first); `by key`: a text key. `max 500`: pages of up to 500 rows
/// (the runs). Written out rather than `#[serde(flatten)]`ed: flattening breaks
/// `deny_unknown_fields` and numbers in a query string. The limit's doc is a
/// literal: utoipa reads no `concat!`.
macro_rules! page_query {
    ($(#[$meta:meta])* pub struct $name:ident by id { $($field:tt)* }) => {
        $crate::api::wire::page_query! { @ $(#[$meta])* $name, 200, "Rows on the page (1–200, default 50).",
            [#[param(pattern = "^[0-9]{1,18}$")]] { $($field)* } }
    };
    ($(#[$meta:meta])* pub struct $name:ident by id, max 500 { $($field:tt)* }) => {
        $crate::api::wire::page_query! { @ $(#[$meta])* $name, 500, "Rows on the page (1–500, default 50).",
            [#[param(pattern = "^[0-9]{1,18}$")]] { $($field)* } }
    };
    ($(#[$meta:meta])* pub struct $name:ident by key { $($field:tt)* }) => {
        $crate::api::wire::page_query! { @ $(#[$meta])* $name, 200, "Rows on the page (1–200, default 50).",
            [] { $($field)* } }
    };
    (@ $(#[$meta:meta])* $name:ident, $max:tt, $limit_doc:tt,
        [$($cursor_attr:tt)*] { $($field:tt)* }) => {
        $(#[$meta])*
        #[derive(Debug, Default, serde::Deserialize, utoipa::IntoParams)]
        #[into_params(parameter_in = Query)]
        #[serde(deny_unknown_fields)]
        pub struct $name {
            $($field)*
            #[doc = $limit_doc]
            #[param(minimum = 1, maximum = $max)]
            pub limit: Option<i64>,
            /// The `next` of the page before.
            $($cursor_attr)*
            pub cursor: Option<String>,
        }

        impl $crate::api::wire::PageAsk for $name {
            const MAX_LIMIT: i64 = $max;
            fn asked_limit(&self) -> Option<i64> {
                self.limit
            }
            fn cursor(&self) -> Option<&str> {
                self.cursor.as_deref()
            }
        }
    };
}
pub(crate) use page_query;

/// The id a cursor of an id-ordered list (newest first) stands for: rows below it.
pub fn id_cursor(cursor: Option<&str>) -> Result<Option<i64>, ApiError> {
    cursor
        .map(|c| {
            c.trim().parse::<i64>().map_err(|_| {
                ApiError::bad_request(format!("cursor {c:?} is not one this list gave"))
            })
        })
        .transpose()
}

/// One page of a list read newest first by id: `read(before, n)` reads the
/// `n` newest rows below the cursor's id (all when `None`); the page asked
/// is the request's, checked here.
pub async fn newest_by_id<R, T, Fut>(
    asked: &impl PageAsk,
    read: impl FnOnce(Option<i64>, i64) -> Fut,
    id: impl Fn(&R) -> i64,
    out: impl Fn(R) -> T,
) -> Result<Page<T>, ApiError>
where
    T: ToSchema,
    Fut: std::future::Future<Output = Result<Vec<R>, memory::StoreError>>,
{
    let limit = asked.page_size()?;
    let rows = read(id_cursor(asked.cursor())?, limit + 1).await?;
    Ok(page(rows, limit, |r| id(r).to_string(), out))
}

/// A page of `rows` read with `limit + 1`: at most `limit` of them, and the
/// cursor of the next page when there were more.
pub fn page<T: ToSchema, R>(
    mut rows: Vec<R>,
    limit: i64,
    cursor: impl Fn(&R) -> String,
    out: impl Fn(R) -> T,
) -> Page<T> {
    let limit = usize::try_from(limit).unwrap_or(0);
    let next = if rows.len() > limit {
        rows.truncate(limit);
        rows.last().map(&cursor)
    } else {
        None
    };
    Page {
        items: rows.into_iter().map(out).collect(),
        next,
    }
}

/// A page of a short list kept in memory, ordered by a text key: the rows
/// after the cursor asked, as many as asked.
pub fn page_by_key<T: ToSchema, R>(
    mut rows: Vec<R>,
    asked: &impl PageAsk,
    key: impl Fn(&R) -> String,
    out: impl Fn(R) -> T,
) -> Result<Page<T>, ApiError> {
    let limit = asked.page_size()?;
    rows.sort_by_key(|r| key(r));
    if let Some(after) = asked.cursor() {
        rows.retain(|r| key(r).as_str() > after);
    }
    rows.truncate(usize::try_from(limit).unwrap_or(0).saturating_add(1));
    Ok(page(rows, limit, key, out))
}

/// A stored time (ms since the epoch) as a UTC time, written ISO-8601.
pub fn at(ms: i64) -> DateTime<Utc> {
    DateTime::from_timestamp_millis(ms).unwrap_or_default()
}

/// Integer fields named `*_at` (ms since the epoch) anywhere in `v`, as
/// ISO-8601 times: the export's records and lines, as the API writes times.
pub fn iso_times(v: &mut serde_json::Value) {
    use serde_json::Value;
    match v {
        Value::Object(map) => {
            for (k, field) in map.iter_mut() {
                match field {
                    Value::Number(n) if k.ends_with("_at") => {
                        if let Some(ms) = n.as_i64() {
                            *field = Value::String(at(ms).to_rfc3339());
                        }
                    }
                    other => iso_times(other),
                }
            }
        }
        Value::Array(items) => items.iter_mut().for_each(iso_times),
        _ => {}
    }
}

/// A JSON request body that may be left out: an empty body is `T::default()`;
/// otherwise as [`Body`].
pub struct OptionalBody<T>(pub T);

impl<T: DeserializeOwned + Default> FromRequest<ApiState> for OptionalBody<T> {
    type Rejection = Response;

    async fn from_request(req: Request, state: &ApiState) -> Result<Self, Response> {
        let bytes = crate::body::read_body(req.into_body(), &state.cfg.server).await?;
        // Left out, or `null` (how a client says "no body" in JSON).
        let text = std::str::from_utf8(&bytes).map(str::trim);
        if bytes.iter().all(u8::is_ascii_whitespace) || text == Ok("null") {
            return Ok(OptionalBody(T::default()));
        }
        json_object(&bytes)
            .map(OptionalBody)
            .map_err(IntoResponse::into_response)
    }
}
