//! `-o/--output` (`crate::cli::OutputFlag`): one meaning in every verb, as in kubectl: the format of what the verb prints.
//! `text` is for people; `json` and `yaml` are the same data for programs (the verb's report,
//! serialised once, then written as JSON or as YAML by kfctl-yaml's writer). Where a verb writes
//! files, the file is `--out` (`chart export`, `secrets generate`, `source bundle`) or
//! `--output-dir` (`template`), never `-o`.

use crate::cli::Output;
use serde::Serialize;

/// Print `data` as `-o json` or `-o yaml` asks (text is the verb's own).
pub(crate) fn print_data(output: Output, data: &impl Serialize) -> anyhow::Result<()> {
    match output {
        Output::Yaml => print!("{}", kfctl_yaml::to_yaml_stream(&[serde_json::to_value(data)?])),
        Output::Json | Output::Text => println!("{}", serde_json::to_string_pretty(data)?),
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    #[test]
    fn yaml_is_the_json_data_written_as_yaml() {
        let data = serde_json::json!({"server": "https://x", "healthy": true, "on": "on"});
        let yaml = kfctl_yaml::to_yaml_stream(&[serde_json::to_value(&data).unwrap()]);
        assert_eq!(kfctl_yaml::parse_stream(&yaml, "yaml").unwrap(), [data]);
        assert!(yaml.contains(r#""on": "on""#), "YAML 1.1 words stay strings: {yaml}");
    }
}
