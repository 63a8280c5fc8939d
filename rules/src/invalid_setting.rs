//! [`InvalidSetting`]: a setting whose value cannot be used, named by its path in the settings object.
//! Below the settings reader, so that the parts that validate their own settings (the image rules, the
//! lifecycle overrides) need not import the reader.

/// A setting whose value cannot be used: the setting's path (`supportedBuilds[1]`) and what is wrong.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{setting}: {message}")]
pub struct InvalidSetting {
    /// The setting, as a field path of the settings object (`windowsTaints[0].effect`).
    pub setting: String,
    /// What is wrong with its value.
    pub message: String,
}

impl InvalidSetting {
    /// An error about `setting`.
    pub fn new(setting: impl Into<String>, message: impl Into<String>) -> Self {
        InvalidSetting {
            setting: setting.into(),
            message: message.into(),
        }
    }

    /// The same error seen from the enclosing object: `pattern` inside `imageRules[0]`.
    pub fn within(self, parent: &str) -> Self {
        InvalidSetting {
            setting: format!("{parent}.{}", self.setting),
            message: self.message,
        }
    }
}
