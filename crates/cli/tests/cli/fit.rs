//! `swapsight fit`: folders of sparse files laid out as Hugging Face lays
//! them out, a GGUF, sizes, a past run's trace, bad input, and (as root, on
//! Linux) a run inside a memory cgroup, whose limit is its memory.

use std::path::Path;
use std::process::Output;

use super::util::*;

pub(super) const GIB: u64 = 1 << 30;

pub(super) fn sparse(dir: &Path, rel: &str, len: u64) {
    let path = dir.join(rel);
    std::fs::create_dir_all(path.parent().unwrap()).unwrap();
    std::fs::File::create(&path).unwrap().set_len(len).unwrap();
}

pub(super) fn index(shards: &[&str]) -> String {
    let map: Vec<String> = shards
        .iter()
        .enumerate()
        .map(|(i, s)| format!("\"model.layers.{i}.mlp.weight\": \"{s}\""))
        .collect();
    format!(
        "{{\"metadata\": {{\"total_size\": 0}}, \"weight_map\": {{{}}}}}",
        map.join(", ")
    )
}

pub(super) const SHARDS: [&str; 3] = [
    "model-00001-of-00003.safetensors",
    "model-00002-of-00003.safetensors",
    "model-00003-of-00003.safetensors",
];

/// An HF model folder of sparse shards: 40 + 40 + 20 MiB, small enough to
/// fit on any machine the tests run on.
pub(super) fn hf_folder(dir: &Path) {
    std::fs::write(dir.join("config.json"), "{\"model_type\": \"llama\"}").unwrap();
    std::fs::write(dir.join("tokenizer.json"), "{}").unwrap();
    sparse(dir, SHARDS[0], 40 * MIB);
    sparse(dir, SHARDS[1], 40 * MIB);
    sparse(dir, SHARDS[2], 20 * MIB);
    std::fs::write(dir.join("model.safetensors.index.json"), index(&SHARDS)).unwrap();
}

pub(super) fn fit(args: &[&str]) -> Output {
    swapsight().arg("fit").args(args).output().unwrap()
}

pub(super) fn fit_json(args: &[&str]) -> (Option<i32>, serde_json::Value) {
    let out = swapsight()
        .arg("fit")
        .args(args)
        .arg("--json")
        .output()
        .unwrap();
    let v: serde_json::Value = serde_json::from_slice(&out.stdout)
        .unwrap_or_else(|e| panic!("{e}: {}{}", stdout_of(&out), stderr_of(&out)));
    (out.status.code(), v)
}

/// The exit code is the verdict, and the verdict is what the answer's own
/// bounds say.
pub(super) fn consistent(code: Option<i32>, v: &serde_json::Value) {
    let over = |what: &str| {
        v["bounds"]
            .as_array()
            .unwrap()
            .iter()
            .any(|b| b["over"] == true && b["if_over"] == what && b.get("framework").is_none())
    };
    let want = if over("does-not-fit") {
        ("does-not-fit", 2)
    } else if over("swaps") {
        ("fits-only-by-swapping", 1)
    } else {
        ("fits", 0)
    };
    assert_eq!(
        (v["verdict"].as_str().unwrap(), code),
        (want.0, Some(want.1)),
        "{v:#}"
    );
    assert_eq!(v["exit_code"], want.1);
}

#[test]
fn an_hf_folder_of_sparse_shards_is_counted_and_fits() {
    let dir = TempDir::new("fit-hf");
    hf_folder(dir.path());
    let out = swapsight().arg("fit").arg(dir.path()).output().unwrap();
    let text = stdout_of(&out);
    assert_eq!(out.status.code(), Some(0), "{text}{}", stderr_of(&out));
    assert!(
        text.starts_with("fits: needs 100 MiB; the closest bound is "),
        "{text}"
    );
    assert!(
        text.contains("— 3 files, 100 MiB (104,857,600 bytes) (the shards model.safetensors.index.json names)\n"),
        "{text}"
    );
    for shard in SHARDS {
        assert!(text.contains(shard), "{text}");
    }
    let (code, v) = fit_json(&[dir.path().to_str().unwrap()]);
    consistent(code, &v);
    assert_eq!(v["model"]["kind"], "files");
    assert_eq!(v["model"]["bytes"], 100 * MIB);
    assert_eq!(v["model_bytes"], 100 * MIB);
    assert_eq!(v["model"]["files"].as_array().unwrap().len(), 3);
    assert_eq!(v["model"]["files"][2]["bytes"], 20 * MIB);
    assert_eq!(v["model"]["indexes"][0], "model.safetensors.index.json");
    assert_eq!(v["bounds"][0]["id"], "memory");
    assert_eq!(v["bounds"][1]["id"], "free-now");
    eprintln!("--- swapsight fit on an HF folder of sparse files ---\n{text}");
}

#[test]
fn an_index_that_names_two_of_three_shards_counts_two_and_names_the_third() {
    let dir = TempDir::new("fit-partial");
    hf_folder(dir.path());
    std::fs::write(
        dir.join("model.safetensors.index.json"),
        index(&SHARDS[..2]),
    )
    .unwrap();
    let (code, v) = fit_json(&[dir.path().to_str().unwrap()]);
    consistent(code, &v);
    assert_eq!(v["model"]["bytes"], 80 * MIB);
    let left = &v["model"]["left_out"];
    assert_eq!(left.as_array().unwrap().len(), 1, "{v:#}");
    assert_eq!(left[0]["path"], SHARDS[2]);
    assert_eq!(left[0]["bytes"], 20 * MIB);
    assert_eq!(left[0]["why"], "not named by model.safetensors.index.json");
    let text = stdout_of(&swapsight().arg("fit").arg(dir.path()).output().unwrap());
    assert!(
        text.contains(&format!(
            "  left out 20 MiB  {}: not named by model.safetensors.index.json\n",
            SHARDS[2]
        )),
        "{text}"
    );
}

#[test]
fn a_gguf_too_large_for_any_machine_does_not_fit() {
    let dir = TempDir::new("fit-gguf");
    sparse(dir.path(), "huge-Q8_0.gguf", 1 << 40);
    let gguf = dir.join("huge-Q8_0.gguf");
    let out = swapsight().arg("fit").arg(&gguf).output().unwrap();
    let text = stdout_of(&out);
    assert_eq!(out.status.code(), Some(2), "{text}{}", stderr_of(&out));
    assert!(
        text.starts_with("does not fit: needs 1024.0 GiB, above physical memory ("),
        "{text}"
    );
    assert!(text.contains("no setting makes it fit"), "{text}");
    let (code, v) = fit_json(&[gguf.to_str().unwrap()]);
    consistent(code, &v);
    assert_eq!(v["model"]["files"][0]["path"], "huge-Q8_0.gguf");
    assert_eq!(v["needed_bytes"], 1u64 << 40);
}

#[test]
fn a_size_is_judged_as_the_bytes_it_says() {
    let (code, v) = fit_json(&["4K"]);
    assert_eq!(code, Some(0), "{v:#}");
    assert_eq!(
        v["model"],
        serde_json::json!({"kind": "size", "bytes": 4096, "given": "4K"})
    );
    let (code, v) = fit_json(&["1P"]);
    assert_eq!(code, Some(2), "{v:#}");
    // Every size between, answered as its own bounds say.
    for s in ["512MiB", "4G", "16G", "64G"] {
        let (code, v) = fit_json(&[s]);
        consistent(code, &v);
    }
}

#[test]
fn bad_input_is_one_line_and_its_own_exit_code() {
    let one_line = |out: &Output| {
        let err = stderr_of(out);
        assert_eq!(err.lines().count(), 1, "{err}");
        assert!(stdout_of(out).is_empty(), "{}", stdout_of(out));
        err
    };
    let out = fit(&["8X"]);
    assert_eq!(out.status.code(), Some(3));
    assert_eq!(
        one_line(&out),
        "swapsight: invalid size '8X': unknown unit 'x' (use B, K, M, G, T or P; KiB, MiB, GiB also work); no file or folder has that name either\n"
    );
    let out = fit(&["8G", "--bogus"]);
    assert_eq!(out.status.code(), Some(3));
    one_line(&out);
    let out = swapsight().arg("fit").output().unwrap();
    assert_eq!(out.status.code(), Some(3));
    one_line(&out);
    let out = fit(&["/nonexistent/model"]);
    assert_eq!(out.status.code(), Some(4));
    assert!(
        one_line(&out).starts_with("swapsight: cannot read /nonexistent/model: "),
        "{}",
        stderr_of(&out)
    );
    let empty = TempDir::new("fit-empty");
    std::fs::write(empty.join("config.json"), "{}").unwrap();
    let out = swapsight().arg("fit").arg(empty.path()).output().unwrap();
    assert_eq!(out.status.code(), Some(4));
    assert!(one_line(&out).contains("no model weights counted in"));

    let help = fit(&["--help"]);
    assert_eq!(help.status.code(), Some(0));
    let text = stdout_of(&help);
    assert!(text.contains("Exit codes:\n  0  fits\n  1  fits only by swapping\n  2  does not fit\n  3  bad arguments"), "{text}");
    assert!(text.contains("swapsight fit 40G"), "{text}");
    // A wheel has no docs/: the details are a URL (a release build) or
    // said to be in the source, never a bare local path.
    assert!(!text.contains("Details: docs/fit.md\n"), "{text}");
    assert!(
        text.contains("Details: https://github.com/")
            || text.contains("Details: docs/fit.md in swapsight's source repository"),
        "{text}"
    );
}

/// A trace written by hand as docs/trace-format.md lays it out: a command
/// whose tree is two processes, peaking together at 3 GiB + 1 GiB.
fn handwritten_trace(path: &Path) {
    let sample = |t: u64, a: u64, b: u64| {
        format!(
            r#"{{"type":"sample","t_ms":{t},"sys":{{"phys_bytes":25276510208,"free_pct":80.0,"swap_used_bytes":0,"swap_total_bytes":2147479552,"compressed_bytes":0,"page_size":4096}},"procs":[{{"pid":100,"ppid":1,"name":"python3","footprint_bytes":{a},"pageins":0,"start_time":1}},{{"pid":101,"ppid":100,"name":"worker","footprint_bytes":{b},"pageins":0,"start_time":2}},{{"pid":7,"ppid":1,"name":"bystander","footprint_bytes":{big},"pageins":0,"start_time":3}}],"watched":[100,101]}}"#,
            big = 9 * GIB
        )
    };
    let lines = [
        r#"{"type":"header","format":"swapsight-trace","schema":1,"host":{"os":"linux","phys_bytes":25276510208,"page_size":4096,"hostname":"vm"},"interval_ms":500,"start_unix_ms":1795977218944,"command":["python3","generate.py"],"watch_pid":100,"top_n":10,"writer":"by hand"}"#.to_string(),
        sample(0, GIB, 0),
        sample(500, 3 * GIB, GIB),
        sample(1000, 2 * GIB, GIB),
        r#"{"type":"event","t_ms":1000,"kind":"command-exit","message":"exit status: 0","pid":100,"code":0}"#.to_string(),
    ];
    std::fs::write(path, lines.join("\n") + "\n").unwrap();
}

#[test]
fn a_past_runs_peak_is_the_need_where_it_is_more_than_the_weights() {
    let dir = TempDir::new("fit-from");
    let trace = dir.join("past.jsonl");
    handwritten_trace(&trace);
    let (code, v) = fit_json(&["4K", "--from", trace.to_str().unwrap()]);
    consistent(code, &v);
    let past = &v["past_run"];
    assert_eq!(
        past["peak_footprint_bytes"],
        4 * GIB,
        "Σ of the tree, not the bystander: {v:#}"
    );
    assert_eq!(past["peak_at_ms"], 500);
    assert_eq!(past["of"], "tree");
    assert_eq!(past["command"], "python3 generate.py");
    assert_eq!(past["samples"], 3);
    assert_eq!(v["needed_bytes"], 4 * GIB);
    assert_eq!(v["model_bytes"], 4096);
    let text = stdout_of(&fit(&["4K", "--from", trace.to_str().unwrap()]));
    assert!(
        text.contains("past run: ")
            && text.contains("peak footprint 4.0 GiB of its watched process tree at 0.5s"),
        "{text}"
    );

    // The source's eager run on its 48 GB Mac (synth), at 43.6 GiB.
    let eager = dir.join("eager.jsonl");
    std::fs::write(
        &eager,
        swapsight::synth::to_jsonl(&swapsight::synth::seed_eager()),
    )
    .unwrap();
    let (code, v) = fit_json(&["1G", "--from", eager.to_str().unwrap()]);
    consistent(code, &v);
    let peak = v["past_run"]["peak_footprint_bytes"].as_u64().unwrap();
    assert!((43.0..44.0).contains(&(peak as f64 / GIB as f64)), "{v:#}");
    assert_eq!(v["needed_bytes"], peak);
    assert_eq!(v["past_run"]["os"], "macos");
}

#[test]
fn a_corrupt_or_empty_trace_is_one_line_and_no_answer() {
    let dir = TempDir::new("fit-bad-trace");
    let garbage = dir.join("garbage.jsonl");
    std::fs::write(&garbage, "this is not a trace\n").unwrap();
    let out = fit(&["8G", "--from", garbage.to_str().unwrap()]);
    assert_eq!(out.status.code(), Some(4));
    let err = stderr_of(&out);
    assert_eq!(err.lines().count(), 1, "{err}");
    assert!(err.contains("not a swapsight trace header"), "{err}");
    assert!(stdout_of(&out).is_empty());

    let empty = dir.join("header-only.jsonl");
    let trace = dir.join("t.jsonl");
    handwritten_trace(&trace);
    let header = std::fs::read_to_string(&trace).unwrap();
    std::fs::write(
        &empty,
        header.lines().next().unwrap().to_string() + "\n{\"type\":\"sample\",\"t_ms\":",
    )
    .unwrap();
    let out = fit(&["8G", "--from", empty.to_str().unwrap()]);
    assert_eq!(out.status.code(), Some(4));
    let err = stderr_of(&out);
    assert_eq!(err.lines().count(), 1, "{err}");
    assert!(err.contains("nothing to size a fit from"), "{err}");
}

#[cfg(target_os = "linux")]
#[test]
fn linux_says_the_mac_bounds_are_not_here() {
    let text = stdout_of(&fit(&["1G"]));
    assert!(
        text.contains("GPU wired limit, Metal's recommended working set, PyTorch MPS high watermark, MLX memory limit: not on Linux"),
        "{text}"
    );
}

/// In a 256 MiB memory cgroup holding 128 MiB: 64M fits in what is left,
/// 200M only by swapping (within the limit, above what is free in it),
/// 512M not at all. As a user runs it (no `SWAPSIGHT_SCOPE=host`).
#[cfg(target_os = "linux")]
#[test]
fn in_a_256_mib_cgroup_the_limit_is_the_memory() {
    let Some(rs) = RealSwap::with(64, 256, CgroupSwap::None) else {
        return;
    };
    let dir = TempDir::new("fit-cgroup");
    let bin = env!("CARGO_BIN_EXE_swapsight");
    let d = dir.path().display();
    let script = format!(
        "python3 {fill} --mb 128 --hold 120 > {d}/fill.out & pid=$!; \
         i=0; until grep -q filled {d}/fill.out; do sleep 0.1; i=$((i+1)); [ $i -gt 600 ] && break; done; \
         for s in 64M 200M 512M; do {bin} fit $s --json > {d}/$s.json; echo $? > {d}/$s.code; done; \
         kill $pid",
        fill = memfill().display()
    );
    let out = rs
        .command(&["sh", "-c", &script])
        .env_remove("SWAPSIGHT_SCOPE")
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", stderr_of(&out));
    let answer = |s: &str| -> (i32, serde_json::Value) {
        let code = std::fs::read_to_string(dir.join(&format!("{s}.code"))).unwrap();
        let json = std::fs::read(dir.join(&format!("{s}.json"))).unwrap();
        (
            code.trim().parse().unwrap(),
            serde_json::from_slice(&json).unwrap(),
        )
    };
    let (code, v) = answer("64M");
    let limit = v["bounds"]
        .as_array()
        .unwrap()
        .iter()
        .find(|b| b["id"] == "cgroup-limit")
        .unwrap_or_else(|| panic!("no cgroup limit: {v:#}"));
    assert_eq!(limit["bytes"], 256 * MIB, "{v:#}");
    assert!(
        limit["source"].as_str().unwrap().contains(&format!(
            "cgroup v{} {}",
            rs.version,
            rs.cgroup_path()
        )),
        "{limit:#}"
    );
    assert_eq!(code, 0, "{v:#}");
    let (code, v) = answer("200M");
    assert_eq!(code, 1, "{v:#}");
    assert_eq!(v["verdict"], "fits-only-by-swapping");
    assert!(
        v["summary"]
            .as_str()
            .unwrap()
            .contains("above free in the cgroup now"),
        "{v:#}"
    );
    let (code, v) = answer("512M");
    assert_eq!(code, 2, "{v:#}");
    assert_eq!(
        v["summary"],
        "does not fit: needs 512 MiB, above cgroup memory limit (256 MiB)"
    );
}

#[path = "fit_context.rs"]
pub(super) mod context;

#[path = "fit_hostile.rs"]
mod hostile;

#[path = "fit_run.rs"]
pub(super) mod run;
