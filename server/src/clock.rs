//! The one place the server reads the calendar date: the rules have no clock, so the retirement
//! calendar is read at the date handed to them in the settings (`lifecycle.date`).
//!
//! One-shot commands read today once. The server reads it again as the days pass ([`day_changes`]): a
//! node whose build leaves support at midnight is reported from that day on, without a restart
//! (`Audit::set_date` re-runs the node rules, the only ones that read the date). The clock is a trait
//! ([`Clock`]) so that tests can move the day.

use std::sync::Arc;
use std::time::Duration;

use futures::Stream;
use winplace_rules::Settings;
use winplace_rules::lifecycle::Date;

/// Where today comes from.
pub trait Clock: Send + Sync {
    /// Today (UTC).
    fn today(&self) -> Date;
}

/// The system clock.
#[derive(Debug, Clone, Copy, Default)]
pub struct SystemClock;

impl Clock for SystemClock {
    fn today(&self) -> Date {
        today()
    }
}

/// Today in UTC, from the system clock.
pub fn today() -> Date {
    let secs = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_secs());
    Date::from_unix_days(i64::try_from(secs / 86_400).unwrap_or(i64::MAX))
}

/// Now in UTC to the second, as `YYYY-MM-DDTHH:MM:SS` (no zone: the JUnit schema's timestamp pattern).
pub fn now_utc_seconds() -> String {
    let secs = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_secs());
    let day = Date::from_unix_days(i64::try_from(secs / 86_400).unwrap_or(i64::MAX));
    let s = secs % 86_400;
    format!("{day}T{:02}:{:02}:{:02}", s / 3_600, s % 3_600 / 60, s % 60)
}

/// Sets the date the retirement calendar is read at: `on` (a command's `--on`), else the settings'
/// own `lifecycle.date`, else today.
pub fn date_settings(settings: &mut Settings, on: Option<Date>) {
    settings.lifecycle.date = on.or(settings.lifecycle.date).or_else(|| Some(today()));
}

/// How often the server looks at the clock: a date change is seen within a minute.
pub const DAY_CHECK: Duration = Duration::from_secs(60);

/// The days after `start` as `clock` reaches them: looks every `every` and yields the date each time it
/// differs from the last one yielded (forwards or backwards: a clock set back is followed too). Never
/// ends.
pub fn day_changes(
    clock: Arc<dyn Clock>,
    start: Date,
    every: Duration,
) -> impl Stream<Item = Date> + Send + 'static {
    futures::stream::unfold(start, move |last| {
        let clock = clock.clone();
        async move {
            let mut ticks = tokio::time::interval(every);
            ticks.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
            loop {
                ticks.tick().await;
                let today = clock.today();
                if today != last {
                    return Some((today, today));
                }
            }
        }
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use futures::StreamExt as _;
    use std::sync::Mutex;

    fn day(t: &str) -> Date {
        t.parse().unwrap()
    }

    #[test]
    fn the_flag_wins_then_the_setting_then_today() {
        let mut s = Settings::default();
        date_settings(&mut s, None);
        let today = s.lifecycle.date.expect("today");
        assert!(today >= day("2026-01-01"), "{today}");
        s.lifecycle.date = Some(day("2026-03-02"));
        date_settings(&mut s, None);
        assert_eq!(s.lifecycle.date, Some(day("2026-03-02")));
        date_settings(&mut s, Some(day("2027-01-01")));
        assert_eq!(s.lifecycle.date, Some(day("2027-01-01")));
    }

    /// A clock a test moves.
    struct Fake(Mutex<Date>);

    impl Clock for Fake {
        fn today(&self) -> Date {
            *self.0.lock().unwrap()
        }
    }

    #[tokio::test]
    async fn a_new_day_is_seen_and_the_same_day_is_not() {
        let clock = Arc::new(Fake(Mutex::new(day("2027-01-12"))));
        let mut days = Box::pin(day_changes(
            clock.clone(),
            day("2027-01-12"),
            Duration::from_millis(5),
        ));
        // The same day: nothing within many looks.
        let quiet = tokio::time::timeout(Duration::from_millis(60), days.next()).await;
        assert!(quiet.is_err(), "{quiet:?}");
        *clock.0.lock().unwrap() = day("2027-01-13");
        let next = tokio::time::timeout(Duration::from_secs(5), days.next()).await;
        assert_eq!(next.ok().flatten(), Some(day("2027-01-13")));
        // And again only when it changes.
        let quiet = tokio::time::timeout(Duration::from_millis(60), days.next()).await;
        assert!(quiet.is_err(), "{quiet:?}");
    }
}
