//! Owns the CUDA driver and NVML ABI the limiter needs, declared by hand (no CUDA headers are
//! needed to build): result codes, handle types and the few structs whose fields it reads.

use std::ffi::{c_int, c_uint, c_void};

pub type CUresult = c_int;
pub type CUdevice = c_int;
pub type CUdeviceptr = u64;
pub type CUstream = *mut c_void;
pub type CUfunction = *mut c_void;
pub type CUarray = *mut c_void;
pub type CUmipmappedArray = *mut c_void;
pub type CUmemoryPool = *mut c_void;
pub type CUmemGenericAllocationHandle = u64;

pub const CUDA_SUCCESS: CUresult = 0;
pub const CUDA_ERROR_INVALID_VALUE: CUresult = 1;
pub const CUDA_ERROR_OUT_OF_MEMORY: CUresult = 2;
pub const CUDA_ERROR_NOT_FOUND: CUresult = 500;

/// `cuGetProcAddress` flag: the per-thread-default-stream (`_ptsz`/`_ptds`) variant.
pub const CU_GET_PROC_ADDRESS_PER_THREAD_DEFAULT_STREAM: u64 = 2;

/// `CUDA_ARRAY_DESCRIPTOR`.
#[repr(C)]
#[derive(Clone, Copy, Debug)]
pub struct ArrayDescriptor {
    pub width: usize,
    pub height: usize,
    pub format: c_int,
    pub num_channels: c_uint,
}

/// `CUDA_ARRAY3D_DESCRIPTOR`.
#[repr(C)]
#[derive(Clone, Copy, Debug)]
pub struct Array3dDescriptor {
    pub width: usize,
    pub height: usize,
    pub depth: usize,
    pub format: c_int,
    pub num_channels: c_uint,
    pub flags: c_uint,
}

/// The head of `CUmemAllocationProp`: type, requested handle types, location {type, id}.
#[repr(C)]
#[derive(Clone, Copy, Debug)]
pub struct MemAllocationPropHead {
    pub kind: c_int,
    pub requested_handle_types: c_int,
    pub location_type: c_int,
    pub location_id: c_int,
}

/// `CU_MEM_LOCATION_TYPE_DEVICE`.
pub const CU_MEM_LOCATION_TYPE_DEVICE: c_int = 1;

/// The head of `CUlaunchConfig`: grid then block dimensions.
#[repr(C)]
#[derive(Clone, Copy, Debug)]
pub struct LaunchConfigHead {
    pub grid: [c_uint; 3],
    pub block: [c_uint; 3],
}

/// Bytes per element of a `CUarray_format`, times channels; unknown formats count 16 bytes
/// (the widest) so an unknown format is never under-counted.
pub fn array_element_bytes(format: c_int, channels: c_uint) -> u64 {
    let per_channel: u64 = match format {
        0x01 | 0x08 => 1,        // UNSIGNED_INT8, SIGNED_INT8
        0x02 | 0x09 | 0x10 => 2, // UNSIGNED_INT16, SIGNED_INT16, HALF
        0x03 | 0x0a | 0x20 => 4, // UNSIGNED_INT32, SIGNED_INT32, FLOAT
        _ => 16,
    };
    per_channel * u64::from(channels.clamp(1, 4))
}

/// Bytes of a 1D/2D/3D array: zero dimensions beyond the first count as 1.
pub fn array_bytes(width: usize, height: usize, depth: usize, format: c_int, channels: c_uint) -> u64 {
    [width, height, depth]
        .iter()
        .map(|&d| d.max(1) as u64)
        .fold(array_element_bytes(format, channels), u64::saturating_mul)
}

/// Bytes of a mipmapped array: every level halves each dimension (never below 1).
pub fn mipmapped_bytes(desc: &Array3dDescriptor, levels: c_uint) -> u64 {
    let (mut w, mut h, mut d) = (desc.width.max(1), desc.height.max(1), desc.depth.max(1));
    let mut total = 0u64;
    for _ in 0..levels.max(1) {
        total = total.saturating_add(array_bytes(w, h, d, desc.format, desc.num_channels));
        (w, h, d) = ((w / 2).max(1), (h / 2).max(1), (d / 2).max(1));
    }
    total
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn array_sizes() {
        assert_eq!(array_bytes(1024, 0, 0, 0x20, 4), 1024 * 16);
        assert_eq!(array_bytes(100, 100, 0, 0x01, 1), 10_000);
        let desc = Array3dDescriptor { width: 8, height: 8, depth: 0, format: 0x03, num_channels: 1, flags: 0 };
        // 8x8 + 4x4 + 2x2 + 1x1 texels of 4 bytes.
        assert_eq!(mipmapped_bytes(&desc, 4), (64 + 16 + 4 + 1) * 4);
        assert_eq!(array_element_bytes(0x7777, 1), 16);
    }

    #[test]
    fn struct_layouts_match_the_driver_abi() {
        assert_eq!(std::mem::size_of::<ArrayDescriptor>(), 24);
        assert_eq!(std::mem::size_of::<Array3dDescriptor>(), 40);
        assert_eq!(std::mem::offset_of!(MemAllocationPropHead, location_id), 12);
    }
}
