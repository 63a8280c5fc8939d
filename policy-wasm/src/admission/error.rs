//! What the policy could not read: the `validate` payload, the settings, or the host's lists of the cluster.

use winplace_rules::model::cluster_objects::FieldError;
use winplace_rules::settings::SettingsError;

/// What the policy could not read: the `validate` payload, the settings, or the host's lists of the cluster.
/// The messages are what the host is told (`validate`'s call error, `validate_settings`'s message).
#[derive(Debug, thiserror::Error)]
pub enum InputError {
    /// The `validate` payload is not a [`ValidationPayload`](super::ValidationPayload).
    #[error("validate payload: {0}")]
    Payload(serde_json::Error),
    /// The `validate_settings` payload is not UTF-8.
    #[error("settings: {0}")]
    SettingsEncoding(std::str::Utf8Error),
    /// The settings (of `validate_settings`, or of the `validate` payload) do not decode, or a setting is
    /// wrong: `supportedBuilds[1]: ...` when one is at fault, `settings: ...` otherwise.
    #[error("{}", settings_message(.0))]
    Settings(SettingsError),
    /// The host's list of `kind` has no `items` array (it answered something else, an error object say).
    #[error("the {kind} list has no items array")]
    NoItems {
        /// `Node` or `RuntimeClass`.
        kind: &'static str,
    },
    /// The host's answer for `kind` is not JSON.
    #[error("the {kind} list is not JSON: {error}")]
    NotJson {
        /// `Node` or `RuntimeClass`.
        kind: &'static str,
        /// Where and why it does not parse.
        error: serde_json::Error,
    },
    /// An item of the host's list of `kind` does not decode.
    #[error("{kind} list items[{index}]: {error}")]
    Item {
        /// `Node` or `RuntimeClass`.
        kind: &'static str,
        /// Its index in `items`.
        index: usize,
        /// The field that does not decode, and why.
        error: FieldError,
    },
}

/// A settings error as `validate_settings` words it: the setting and what is wrong, without the file
/// position (the settings are no file).
fn settings_message(e: &SettingsError) -> String {
    match e.setting {
        Some(_) => e.message.trim_start_matches("invalid setting ").to_string(),
        None => format!("settings: {}", e.message),
    }
}
