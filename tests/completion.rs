//! Issue 39: shell completion drives the real shell. `source <(kfctl-rs completion bash)` in an
//! interactive bash completes flags (`install --pro` → `--profile`), built-in profiles
//! (`--profile k` → `kind`), components and `--set` keys; zsh and fish scripts carry the same
//! words (their shells are not on this machine: checked as text).

use crate::common;

use std::process::Command;

/// What bash's completion function offers for `line` (the words before the cursor, the last
/// one being completed).
fn bash_completes(words: &[&str]) -> Vec<String> {
    let bin = common::binary();
    let dir = bin.parent().unwrap().display().to_string();
    let array = words.iter().map(|w| format!("'{w}'")).collect::<Vec<_>>().join(" ");
    let cword = words.len() - 1;
    let script = format!(
        "export PATH='{dir}':$PATH; source <(kfctl-rs completion bash); \
         COMP_WORDS=({array}); COMP_CWORD={cword}; COMP_LINE=\"${{COMP_WORDS[*]}}\"; COMP_POINT=${{#COMP_LINE}}; \
         _kfctl__rs kfctl-rs \"${{COMP_WORDS[$COMP_CWORD]}}\" \"${{COMP_WORDS[$((COMP_CWORD-1))]}}\"; \
         printf '%s\\n' \"${{COMPREPLY[@]}}\""
    );
    let out =
        Command::new("bash").args(["-ic", &script]).current_dir(common::scratch("completion", "cwd")).output().unwrap();
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    String::from_utf8_lossy(&out.stdout).lines().map(String::from).collect()
}

#[test]
fn bash_completes_flags_profiles_components_and_set_keys() {
    assert_eq!(bash_completes(&["kfctl-rs", "install", "--pro"]), ["--profile"]);
    assert_eq!(bash_completes(&["kfctl-rs", "install", "--profile", "k"]), ["kind"]);
    assert_eq!(bash_completes(&["kfctl-rs", "template", "--profile", "m"]), ["minimal", "multi-tenant"]);
    assert!(bash_completes(&["kfctl-rs", "template", "--components", "kat"]).contains(&"katib".to_string()));
    assert_eq!(bash_completes(&["kfctl-rs", "install", "--set", "katib.en"]), ["katib.enabled="]);
    let verbs = bash_completes(&["kfctl-rs", "ins"]);
    assert_eq!(verbs, ["install"]);
}

#[test]
fn zsh_and_fish_scripts_offer_the_same_words() {
    let script = |shell: &str| {
        let out = Command::new(common::binary()).args(["completion", shell]).output().unwrap();
        assert!(out.status.success());
        String::from_utf8(out.stdout).unwrap()
    };
    let zsh = script("zsh");
    assert!(zsh.contains(":PROFILE:(kind minimal multi-tenant)'"), "zsh profiles");
    let fish = script("fish");
    let profile = fish.lines().find(|l| l.contains("using_subcommand install") && l.contains(" -l profile ")).unwrap();
    assert!(profile.ends_with("-a 'kind minimal multi-tenant'"), "{profile}");
    assert!(fish.lines().any(|l| l.contains(" -l set ") && l.contains("katib.enabled=")));
}
