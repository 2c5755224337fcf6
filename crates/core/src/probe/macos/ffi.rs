//! The raw macOS calls of the probe, one small safe wrapper each.
//!
//! Every wrapper makes exactly one call into libSystem, with buffers it owns
//! or borrows for the duration of the call, and returns the kernel's answer
//! unconverted (bytes, counts, errno). All conversion lives in
//! [`super::parse`] and [`super::parse_process`], which the Linux tests
//! cover. The GPU's calls, into IOKit and Metal, are in [`gpu`].

use std::ffi::CStr;
use std::io;
use std::mem;
use std::ptr;

use libc::{c_char, c_int, c_void, pid_t};
use mach2::kern_return::{kern_return_t, KERN_SUCCESS};
use mach2::port::mach_port_t;

pub mod gpu;

extern "C" {
    /// `mach_host_self()` of `<mach/mach_init.h>`: a send right to the host
    /// port. Declared here because `mach2` 0.4 lacks it and `libc`'s copy is
    /// deprecated in favour of `mach2`.
    fn mach_host_self() -> mach_port_t;

    /// `task_name_for_pid` of `<mach/mach_traps.h>`: a task *name* port,
    /// enough for `task_info`; granted for the caller's own user's processes
    /// (or to root). Neither `libc` nor `mach2` 0.4 declares it.
    fn task_name_for_pid(
        target_tport: mach_port_t,
        pid: c_int,
        tn: *mut mach_port_t,
    ) -> kern_return_t;
}

/// `errno` of the call that just failed, as an `io::Error`.
fn last_error() -> io::Error {
    io::Error::last_os_error()
}

/// `proc_listallpids(NULL, 0)`: the kernel's estimate of how many pids there
/// are (negative on error).
pub fn pid_count_estimate() -> c_int {
    // SAFETY: a null buffer with size 0 asks only for the count; nothing is
    // written.
    unsafe { libc::proc_listallpids(ptr::null_mut(), 0) }
}

/// `proc_listallpids`: fills `buf` with pids, returns how many were written.
pub fn list_all_pids(buf: &mut [pid_t]) -> io::Result<usize> {
    let size = c_int::try_from(mem::size_of_val(buf))
        .map_err(|_| io::Error::new(io::ErrorKind::InvalidInput, "pid buffer too large"))?;
    // SAFETY: `buf` is a live, writable slice of `size` bytes; the kernel
    // writes at most `size` bytes into it.
    let n = unsafe { libc::proc_listallpids(buf.as_mut_ptr().cast::<c_void>(), size) };
    usize::try_from(n).map_err(|_| last_error())
}

/// What the probe keeps of `proc_pid_rusage(RUSAGE_INFO_V4)`.
#[derive(Debug, Clone, Copy)]
pub struct Rusage {
    pub phys_footprint: u64,
    pub pageins: u64,
}

/// `proc_pid_rusage(pid, RUSAGE_INFO_V4)`. Fails with EPERM for another
/// user's process (unless root) and ESRCH for a vanished one.
pub fn pid_rusage(pid: pid_t) -> io::Result<Rusage> {
    // SAFETY: `rusage_info_v4` is plain old data (integers and a byte array);
    // all-zero is a valid value.
    let mut info: libc::rusage_info_v4 = unsafe { mem::zeroed() };
    // The libc signature takes `*mut rusage_info_t` (itself `*mut c_void`);
    // the kernel treats it as a pointer to the struct of the flavor asked.
    let buf = ptr::addr_of_mut!(info).cast::<libc::rusage_info_t>();
    // SAFETY: `buf` points to a live `rusage_info_v4`, exactly the struct the
    // RUSAGE_INFO_V4 flavor fills.
    let rc = unsafe { libc::proc_pid_rusage(pid, libc::RUSAGE_INFO_V4, buf) };
    if rc != 0 {
        return Err(last_error());
    }
    Ok(Rusage {
        phys_footprint: info.ri_phys_footprint,
        pageins: info.ri_pageins,
    })
}

/// What the probe keeps of `proc_pidinfo(PROC_PIDT_SHORTBSDINFO)`, which
/// answers for every user's processes.
#[derive(Debug, Clone, Copy)]
pub struct ShortBsdInfo {
    pub ppid: u32,
    pub comm: [u8; super::parse_process::MAXCOMLEN],
    /// [`owner`](crate::probe::owner) of `pbsi_ruid`, `pbsi_uid`
    /// (effective) and `pbsi_svuid`.
    pub uid: Option<u32>,
}

/// `proc_pidinfo(pid, PROC_PIDT_SHORTBSDINFO)`. ESRCH for a vanished
/// process (and for zombies).
pub fn short_bsd_info(pid: pid_t) -> io::Result<ShortBsdInfo> {
    // SAFETY: `proc_bsdshortinfo` is plain old data; all-zero is valid.
    let mut info: libc::proc_bsdshortinfo = unsafe { mem::zeroed() };
    let size = mem::size_of::<libc::proc_bsdshortinfo>() as c_int;
    // SAFETY: the buffer is a live `proc_bsdshortinfo` of `size` bytes, the
    // struct this flavor fills.
    let n = unsafe {
        libc::proc_pidinfo(
            pid,
            libc::PROC_PIDT_SHORTBSDINFO,
            0,
            ptr::addr_of_mut!(info).cast::<c_void>(),
            size,
        )
    };
    if n != size {
        // 0 with errno on failure; a short answer is treated the same way.
        let err = last_error();
        return Err(if n == 0 {
            err
        } else {
            io::Error::new(io::ErrorKind::InvalidData, "short proc_bsdshortinfo")
        });
    }
    Ok(ShortBsdInfo {
        ppid: info.pbsi_ppid,
        // c_char is i8 on both Apple targets; keep the bits.
        comm: info.pbsi_comm.map(|c| c as u8),
        uid: crate::probe::owner(info.pbsi_ruid, info.pbsi_uid, info.pbsi_svuid),
    })
}

/// `sysctl {CTL_KERN, KERN_PROC, KERN_PROC_PID, pid}`: the process's
/// `struct kinfo_proc` into `buf`; returns how many bytes the kernel wrote
/// (0 for a pid that does not exist).
pub fn kinfo_proc(pid: pid_t, buf: &mut [u8]) -> io::Result<usize> {
    sysctl_read(
        &mut [libc::CTL_KERN, libc::KERN_PROC, libc::KERN_PROC_PID, pid],
        buf,
    )
}

/// `sysctl(mib)` read into `buf`; returns how many bytes the kernel wrote.
fn sysctl_read(mib: &mut [c_int], buf: &mut [u8]) -> io::Result<usize> {
    let mut len = buf.len();
    let depth = libc::c_uint::try_from(mib.len())
        .map_err(|_| io::Error::new(io::ErrorKind::InvalidInput, "mib too long"))?;
    // SAFETY: `mib` holds `depth` ints; `buf` is a live writable buffer whose
    // size is passed in `len`, which the kernel updates; no new value is set.
    let rc = unsafe {
        libc::sysctl(
            mib.as_mut_ptr(),
            depth,
            buf.as_mut_ptr().cast::<c_void>(),
            &mut len,
            ptr::null_mut(),
            0,
        )
    };
    if rc != 0 {
        return Err(last_error());
    }
    Ok(len.min(buf.len()))
}

/// `sysctl {CTL_KERN, KERN_PROCARGS2, pid}` with no buffer: how many bytes
/// the answer needs. The kernel answers only for the caller's own user's
/// processes (or to root): EINVAL otherwise
/// (`is_procargs_content_read_permitted`, `bsd/kern/kern_sysctl.c`).
pub fn procargs2_size(pid: pid_t) -> io::Result<usize> {
    let mut mib = [libc::CTL_KERN, libc::KERN_PROCARGS2, pid];
    let mut len = 0usize;
    // SAFETY: `mib` holds 3 ints; a null buffer asks only for the size, which
    // the kernel writes to `len`; no new value is set.
    let rc = unsafe {
        libc::sysctl(
            mib.as_mut_ptr(),
            mib.len() as libc::c_uint,
            ptr::null_mut(),
            &mut len,
            ptr::null_mut(),
            0,
        )
    };
    if rc != 0 {
        return Err(last_error());
    }
    Ok(len)
}

/// `sysctl {CTL_KERN, KERN_PROCARGS2, pid}` into `buf`; returns how many
/// bytes the kernel wrote. A buffer smaller than the answer gets its
/// *tail*, so size it with [`procargs2_size`].
pub fn procargs2(pid: pid_t, buf: &mut [u8]) -> io::Result<usize> {
    sysctl_read(&mut [libc::CTL_KERN, libc::KERN_PROCARGS2, pid], buf)
}

/// `proc_pidpath`: the executable's path into `buf`; returns its length.
/// Answers for other users' processes too (unlike `proc_name`).
pub fn pid_path(pid: pid_t, buf: &mut [u8]) -> io::Result<usize> {
    let size = u32::try_from(buf.len()).unwrap_or(u32::MAX);
    // SAFETY: `buf` is a live writable buffer of at least `size` bytes.
    let n = unsafe { libc::proc_pidpath(pid, buf.as_mut_ptr().cast::<c_void>(), size) };
    match usize::try_from(n) {
        Ok(n) if n > 0 => Ok(n.min(buf.len())),
        _ => Err(last_error()),
    }
}

/// `statfs(path)`: the volume's free blocks for an unprivileged writer
/// and its block size (`f_bavail`, `f_bsize` of `struct statfs`,
/// `<sys/mount.h>`); `None` when the call fails.
pub fn statfs_free(path: &CStr) -> Option<(u64, u32)> {
    // SAFETY: `statfs` is plain old data (integers and byte arrays); all
    // zeroes is a valid value.
    let mut st: libc::statfs = unsafe { mem::zeroed() };
    // SAFETY: a NUL-terminated path and a struct the call fills.
    let rc = unsafe { libc::statfs(path.as_ptr(), &mut st) };
    (rc == 0).then_some((st.f_bavail, st.f_bsize))
}

/// `sysctlbyname(name)` into `buf`; returns how many bytes the kernel wrote.
pub fn sysctl_by_name(name: &CStr, buf: &mut [u8]) -> io::Result<usize> {
    let mut len = buf.len();
    // SAFETY: `name` is NUL-terminated; `buf` is a live writable buffer whose
    // size is passed in `len`, which the kernel updates; no new value is set.
    let rc = unsafe {
        libc::sysctlbyname(
            name.as_ptr(),
            buf.as_mut_ptr().cast::<c_void>(),
            &mut len,
            ptr::null_mut(),
            0,
        )
    };
    if rc != 0 {
        return Err(last_error());
    }
    Ok(len.min(buf.len()))
}

/// A send right to the host port, released when dropped.
#[derive(Debug)]
pub struct HostPort(mach_port_t);

impl HostPort {
    /// `mach_host_self()`.
    pub fn acquire() -> Self {
        // SAFETY: no arguments; returns a port name owned by this task.
        HostPort(unsafe { mach_host_self() })
    }

    /// `host_statistics64(host, HOST_VM_INFO64)` into `buf`; returns the
    /// count the kernel wrote back (how many `integer_t` are valid), or the
    /// `kern_return_t` on failure.
    ///
    /// `count` is what the caller asks for (`HOST_VM_INFO64_COUNT`); `buf`
    /// may be larger. Returns the kernel's code and the count it wrote back,
    /// unjudged: `MIG_ARRAY_TOO_LARGE` also leaves `count` valid entries.
    pub fn vm_info64(&self, buf: &mut [libc::integer_t], count: usize) -> (kern_return_t, usize) {
        let mut n = libc::mach_msg_type_number_t::try_from(count.min(buf.len())).unwrap_or(0);
        // SAFETY: `buf` is a live writable array of at least `n` integer_t,
        // the unit `n` is measured in; the kernel (and the MIG stub) write at
        // most `n` entries and update `n`.
        let kr = unsafe {
            libc::host_statistics64(self.0, libc::HOST_VM_INFO64, buf.as_mut_ptr(), &mut n)
        };
        (kr, (n as usize).min(buf.len()))
    }
}

impl Drop for HostPort {
    fn drop(&mut self) {
        // SAFETY: `self.0` is a port right of this task obtained from
        // `mach_host_self`, released exactly once here; the result is ignored
        // because nothing can be done about a failure in drop.
        unsafe {
            mach2::mach_port::mach_port_deallocate(mach2::traps::mach_task_self(), self.0);
        }
    }
}

/// A task name port of another process, released when dropped.
#[derive(Debug)]
pub struct TaskName(mach_port_t);

impl TaskName {
    /// `task_name_for_pid(mach_task_self(), pid)`; the `kern_return_t` on
    /// failure (another user's process, or one that is gone).
    pub fn for_pid(pid: pid_t) -> Result<Self, kern_return_t> {
        let mut port: mach_port_t = 0;
        // SAFETY: `port` is a live `mach_port_t` the call writes on success;
        // `mach_task_self()` is this task's own port.
        let kr = unsafe { task_name_for_pid(mach2::traps::mach_task_self(), pid, &mut port) };
        if kr != KERN_SUCCESS {
            return Err(kr);
        }
        Ok(TaskName(port))
    }

    /// `task_info(task, TASK_VM_INFO)` into `buf`, asking for `count`
    /// entries; the kernel's code and the count it wrote back.
    pub fn vm_info(&self, buf: &mut [libc::integer_t], count: usize) -> (kern_return_t, usize) {
        let mut n = libc::mach_msg_type_number_t::try_from(count.min(buf.len())).unwrap_or(0);
        // SAFETY: `buf` is a live writable array of at least `n` integer_t;
        // the kernel writes at most `n` entries and updates `n`.
        let kr = unsafe {
            libc::task_info(
                self.0,
                super::parse_process::TASK_VM_INFO,
                buf.as_mut_ptr(),
                &mut n,
            )
        };
        (kr, (n as usize).min(buf.len()))
    }
}

impl Drop for TaskName {
    fn drop(&mut self) {
        // SAFETY: `self.0` is a port right this task got from
        // `task_name_for_pid`, released exactly once here.
        unsafe {
            mach2::mach_port::mach_port_deallocate(mach2::traps::mach_task_self(), self.0);
        }
    }
}

/// `proc_pidinfo(pid, PROC_PIDUNIQIDENTIFIERINFO)` into `buf` (at least
/// `PROC_UNIQIDENTIFIERINFO_SIZE` bytes); returns how many bytes the kernel
/// wrote. Answers for every user's processes.
pub fn uniq_identifier_info(pid: pid_t, buf: &mut [u8]) -> io::Result<usize> {
    let size = c_int::try_from(buf.len())
        .map_err(|_| io::Error::new(io::ErrorKind::InvalidInput, "buffer too large"))?;
    // SAFETY: `buf` is a live writable buffer of `size` bytes; the kernel
    // copies out at most that many.
    let n = unsafe {
        libc::proc_pidinfo(
            pid,
            super::parse_process::PROC_PIDUNIQIDENTIFIERINFO,
            0,
            buf.as_mut_ptr().cast::<c_void>(),
            size,
        )
    };
    match usize::try_from(n) {
        Ok(n) if n > 0 => Ok(n.min(buf.len())),
        _ => Err(last_error()),
    }
}

/// `gethostname` into `buf` (NUL-terminated on success when it fits).
pub fn hostname(buf: &mut [u8]) -> io::Result<()> {
    // SAFETY: `buf` is a live writable buffer of `buf.len()` bytes.
    let rc = unsafe { libc::gethostname(buf.as_mut_ptr().cast::<c_char>(), buf.len()) };
    if rc != 0 {
        return Err(last_error());
    }
    Ok(())
}
