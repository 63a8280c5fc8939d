//! The one place the server reads the calendar date: the rules have no clock, so the retirement
//! calendar is read at the date handed to them in the settings (`lifecycle.date`).

use winplace_rules::Settings;
use winplace_rules::lifecycle::Date;

/// Today in UTC, from the system clock.
pub fn today() -> Date {
    let secs = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_secs());
    Date::from_unix_days(i64::try_from(secs / 86_400).unwrap_or(i64::MAX))
}

/// Sets the date the retirement calendar is read at: `on` (a command's `--on`), else the settings'
/// own `lifecycle.date`, else today.
pub fn date_settings(settings: &mut Settings, on: Option<Date>) {
    settings.lifecycle.date = on.or(settings.lifecycle.date).or_else(|| Some(today()));
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_flag_wins_then_the_setting_then_today() {
        let day = |t: &str| t.parse::<Date>().unwrap();
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
}
