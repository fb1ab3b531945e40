//! What `steward serve` runs in the background beside the HTTP server: the
//! jobs and the embeddings worker (`Services::workers`), the channels'
//! connections (the channels crate, above this one) and the metrics listener, each a
//! [`Worker`]. `serve` starts them from one list ([`start`]) and stops them
//! as one ([`Running::stop`]).

use std::collections::HashMap;
use std::future::Future;
use tokio::task::{Id, JoinSet};
pub use tokio_util::sync::CancellationToken;

/// Why a worker stopped other than by being told to.
#[derive(Debug, thiserror::Error)]
pub enum WorkerError {
    #[error("the {worker} worker: {source}")]
    Failed {
        worker: &'static str,
        #[source]
        source: Box<dyn std::error::Error + Send + Sync>,
    },
    #[error("the {0} worker stopped unexpectedly")]
    Ended(&'static str),
    #[error("the {worker} worker panicked: {source}")]
    Panicked {
        worker: &'static str,
        #[source]
        source: tokio::task::JoinError,
    },
}

/// One piece of background work.
#[async_trait::async_trait]
pub trait Worker: Send {
    /// What logs and errors call it.
    fn name(&self) -> &'static str;
    /// Work until `shutdown` is cancelled, then return `Ok`. Returning before
    /// that (an error, or `Ok`) ends `serve`.
    async fn run(self: Box<Self>, shutdown: CancellationToken) -> Result<(), WorkerError>;
}

/// Workers started on one shutdown token.
pub struct Running {
    shutdown: CancellationToken,
    tasks: JoinSet<Result<(), WorkerError>>,
    names: HashMap<Id, &'static str>,
}

/// Start every worker of `list` in its own task, stopped by `shutdown`.
pub fn start(list: Vec<Box<dyn Worker>>, shutdown: &CancellationToken) -> Running {
    let mut tasks = JoinSet::new();
    let mut names = HashMap::new();
    for worker in list {
        let name = worker.name();
        let task = tasks.spawn(worker.run(shutdown.clone()));
        names.insert(task.id(), name);
    }
    Running {
        shutdown: shutdown.clone(),
        tasks,
        names,
    }
}

impl Running {
    /// The names of the workers started, in no order.
    pub fn names(&self) -> Vec<&'static str> {
        self.names.values().copied().collect()
    }

    /// Run `server` beside the workers. When it returns (for `steward
    /// serve`: on ctrl-c), the workers are stopped and its output returned;
    /// when a worker ends first (Discord refusing the token), that is the
    /// error, and `server` is dropped.
    pub async fn beside<T>(mut self, server: impl Future<Output = T>) -> Result<T, WorkerError> {
        let mut server = std::pin::pin!(server);
        let error = loop {
            tokio::select! {
                served = &mut server => {
                    self.stop().await?;
                    return Ok(served);
                }
                Some(ended) = self.tasks.join_next_with_id() => match self.outcome(ended) {
                    // Told to stop (ctrl-c): the server is stopping too.
                    Ok(_) if self.shutdown.is_cancelled() => continue,
                    Ok(name) => break WorkerError::Ended(name),
                    Err(e) => break e,
                },
            }
        };
        let _ = self.stop().await;
        Err(error)
    }

    /// Cancel the shutdown token and wait for every worker; the first error.
    pub async fn stop(mut self) -> Result<(), WorkerError> {
        self.shutdown.cancel();
        let mut first = Ok(());
        while let Some(ended) = self.tasks.join_next_with_id().await {
            if let Err(e) = self.outcome(ended) {
                tracing::error!(error = %e, "worker failed");
                if first.is_ok() {
                    first = Err(e);
                }
            }
        }
        first
    }

    /// The name of a worker that returned `Ok`, or why it failed.
    fn outcome(
        &self,
        ended: Result<(Id, Result<(), WorkerError>), tokio::task::JoinError>,
    ) -> Result<&'static str, WorkerError> {
        match ended {
            Ok((id, Ok(()))) => Ok(self.name_of(id)),
            Ok((_, Err(e))) => Err(e),
            Err(e) => Err(WorkerError::Panicked {
                worker: self.name_of(e.id()),
                source: e,
            }),
        }
    }

    fn name_of(&self, id: Id) -> &'static str {
        self.names.get(&id).copied().unwrap_or("unknown")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Works until told to stop, or (`early`) ends at once.
    struct Idle {
        early: bool,
    }

    #[async_trait::async_trait]
    impl Worker for Idle {
        fn name(&self) -> &'static str {
            if self.early {
                "early"
            } else {
                "idle"
            }
        }
        async fn run(self: Box<Self>, shutdown: CancellationToken) -> Result<(), WorkerError> {
            if !self.early {
                shutdown.cancelled().await;
            }
            Ok(())
        }
    }

    #[tokio::test]
    async fn workers_told_to_stop_with_the_server_are_not_an_error() {
        let shutdown = CancellationToken::new();
        let running = start(vec![Box::new(Idle { early: false })], &shutdown);
        assert_eq!(running.names(), ["idle"]);
        // ctrl-c: one token stops the server and the workers at once.
        shutdown.cancel();
        let server = async {
            tokio::task::yield_now().await;
            "served"
        };
        assert_eq!(running.beside(server).await.expect("clean stop"), "served");
    }

    #[tokio::test]
    async fn a_worker_ending_on_its_own_ends_the_server_with_an_error() {
        let shutdown = CancellationToken::new();
        let running = start(
            vec![
                Box::new(Idle { early: false }),
                Box::new(Idle { early: true }),
            ],
            &shutdown,
        );
        let err = running
            .beside(std::future::pending::<()>())
            .await
            .expect_err("ended early");
        assert_eq!(err.to_string(), "the early worker stopped unexpectedly");
        assert!(shutdown.is_cancelled(), "the others were told to stop");
    }
}
