//! Generates the kubelet device plugin API (v1beta1) from the proto in `proto/`.
//!
//! protoc comes from `protoc-bin-vendored`, so a build needs no system protoc and the
//! generated code does not depend on whatever protoc version a machine happens to have.

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let protoc = protoc_bin_vendored::protoc_bin_path()?;
    // Build scripts run single-threaded, so setting the variable races with nothing.
    std::env::set_var("PROTOC", protoc);
    let proto = "proto/deviceplugin/v1beta1/api.proto";
    println!("cargo:rerun-if-changed={proto}");
    tonic_prost_build::configure().compile_protos(&[proto], &["proto"])?;
    Ok(())
}
