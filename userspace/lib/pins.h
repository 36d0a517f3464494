/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The objects scx_tidemark pins under TM_PIN_DIR, and the one way the other
 * programs open them: the scheduler's ABI version and each map's key and
 * value size are checked first, so a reader built for another layout is
 * refused with a message naming both versions instead of misreading (or
 * overflowing its buffer on) a map of a different shape.
 */
#ifndef __TM_PINS_H
#define __TM_PINS_H
#include <stdbool.h>
#include <stddef.h>
#include "tidemark_abi.h"

#define TM_PIN_DIR "/sys/fs/bpf/tidemark"

enum tm_pin {
	TM_PIN_ABI,
	TM_PIN_CLASSES,
	TM_PIN_TUNABLES,
	TM_PIN_STATS,
	TM_PIN_CG_WAITS,
	TM_PIN_HOMES,
	TM_PIN_BE_CAPS,
	TM_PIN_TUNABLES_UPDATE, /* a program, not a map */
	TM_PIN_CG_BW,
	TM_PIN_BW_UPDATE, /* a program */
	TM_PIN_TRACE,	  /* a ring buffer: no key or value */
	TM_PIN_TRACE_CTL,
	TM_NR_PINS,
};

struct tm_pin_desc {
	const char *name;
	__u32 key_size, value_size; /* 0, 0 for the program */
};

extern const struct tm_pin_desc tm_pins[TM_NR_PINS];

/*
 * The pin directory @dir may be trusted: a directory owned by root and
 * writable by root only. 0; -1 with errno (ENOENT: absent; EPERM: someone
 * else's, group- or world-writable, or not a directory) and a message.
 */
int tm_pin_dir_check(const char *dir, char *err, size_t len);

/*
 * Is tidemark the sched_ext scheduler running now? true; false with what
 * runs instead in @why. *@seq (may be NULL) gets sched_ext's enable_seq, -1
 * when the kernel has none.
 */
bool tm_sched_running(long *seq, char *why, size_t len);

/*
 * Open pinned object @which under @pin_dir (NULL: TM_PIN_DIR) for program
 * @who. Returns an fd, or -1 with errno ENOENT (no scheduler pinned there),
 * EPROTO (ABI version or map layout differs) or ESTALE (the scheduler that
 * pinned them is gone: after a kill -9 its maps stay, and a write there
 * would reach nothing) and a message in @err.
 */
int tm_pin_open(const char *pin_dir, enum tm_pin which, const char *who, char *err, size_t len);

/*
 * Change tunables through the scheduler's tunables_update program: the
 * fields named in @set (TM_TUN_* bits) take @val's values, and class_gen is
 * bumped when @bump_class_gen. Applied atomically, validated in the kernel.
 * On success *after (if not NULL) holds the tunables as they now are and
 * *before as they were. Returns 0; -1 with a message (errno EINVAL: the
 * result would be invalid, nothing applied).
 */
int tm_tunables_update(int prog_fd, __u32 set, const struct tm_tunables *val, bool bump_class_gen,
		       struct tm_tunables *after, struct tm_tunables *before, char *err,
		       size_t len);
/*
 * Run the scheduler's bw_update program on @req (a cgroup's cpu.max or
 * cap). Returns 0; -1 with errno and a message naming the cgroup id.
 */
int tm_bw_update(int prog_fd, struct tm_bw_req *req, char *err, size_t len);
/*
 * The class the scheduler gives cgroup @rel: that of its nearest classified
 * ancestor in map @classes_fd (@rel included), TM_CLASS_SYSTEM when none is.
 * The classified cgroup ("/x", "/" for the root) goes to @from, "" if none.
 */
int tm_class_of(int classes_fd, const char *root, const char *rel, char *from, size_t fromlen);
#endif
