//! Where the origin's log lines go: standard error, through a writer that never fails.
//!
//! Logging must never end the task that logged, and the payment task and the recovery
//! loop log. When standard error is a pipe nobody reads any more (a log shipper that
//! died), a write fails with `EPIPE`; tracing-subscriber would then report the failure
//! with `eprintln!`, which panics on that same pipe and ends the task — a payment left
//! between its two transactions, the recovery loop gone. So a line that cannot be
//! written is dropped and counted (`origin_log_writes_dropped_total`), and `main` turns
//! tracing-subscriber's own report off.

use std::io::{self, Write};
use std::sync::LazyLock;

use prometheus_client::metrics::counter::Counter;

/// Log writes dropped because the output could not take them, since the process started.
pub static DROPPED: LazyLock<Counter> = LazyLock::new(Counter::default);

/// `inner`, except that a write it fails is dropped and counted, never an error.
pub struct LogWriter<W>(pub W);

impl<W: Write> Write for LogWriter<W> {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        match self.0.write(buf) {
            Ok(written) => Ok(written),
            Err(_) => {
                DROPPED.inc();
                Ok(buf.len())
            }
        }
    }

    fn flush(&mut self) -> io::Result<()> {
        if self.0.flush().is_err() {
            DROPPED.inc();
        }
        Ok(())
    }
}

/// The origin's log output: standard error, never failing.
pub fn stderr() -> LogWriter<io::Stderr> {
    LogWriter(io::stderr())
}

#[cfg(test)]
mod tests {
    use super::*;

    /// An output whose reader has gone.
    struct ClosedPipe;

    impl Write for ClosedPipe {
        fn write(&mut self, _: &[u8]) -> io::Result<usize> {
            Err(io::Error::from(io::ErrorKind::BrokenPipe))
        }

        fn flush(&mut self) -> io::Result<()> {
            Err(io::Error::from(io::ErrorKind::BrokenPipe))
        }
    }

    #[test]
    fn a_line_the_output_cannot_take_is_dropped_and_counted_never_an_error() {
        let before = DROPPED.get();
        let mut writer = LogWriter(ClosedPipe);
        assert!(writeln!(writer, "a payment line").is_ok());
        assert!(writer.flush().is_ok());
        assert!(DROPPED.get() >= before + 2);
    }

    #[test]
    fn a_line_the_output_takes_passes_unchanged() {
        let mut writer = LogWriter(Vec::new());
        writeln!(writer, "approved").expect("written");
        assert_eq!(writer.0, b"approved\n");
    }

    #[test]
    fn tracing_through_a_closed_pipe_does_not_panic_the_task_that_logs() {
        let subscriber = tracing_subscriber::fmt()
            .with_writer(|| LogWriter(ClosedPipe))
            .log_internal_errors(false)
            .finish();
        tracing::subscriber::with_default(subscriber, || {
            for _ in 0..100 {
                tracing::info!(order_id = "o-1", "payment approved");
            }
        });
    }
}
