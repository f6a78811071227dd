/* SPDX-License-Identifier: MIT */
/*
 * record.c's entry points: the connection to `utrace record` and the
 * event pool of this process.
 */
#ifndef UTRACE_RUNTIME_RECORD_H
#define UTRACE_RUNTIME_RECORD_H

#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

#include <utrace/tracepoint.h>

#include "compiler.h"

/* The memfd of utrace__pool, or -1. */
extern int utrace__pool_fd UTRACE_HIDDEN;

/**
 * utrace__record_init - read UTRACE_BUFFER_SIZE, UTRACE_MODE, UTRACE_RECORD
 *
 * Called once at start; connects to the recorder UTRACE_RECORD names and
 * hands it a new pool.  A failure is said once and the program runs on.
 */
void utrace__record_init(void) UTRACE_HIDDEN;

/**
 * utrace__record_send_format - send an event's format to the recorder
 * @ev: the event, just registered
 *
 * Nothing when no recorder is connected.  Registry lock held: formats go
 * out in registration order.
 */
void utrace__record_send_format(const struct utrace_event *ev) UTRACE_HIDDEN;

/**
 * utrace__record_probe_note - tell the recorder a dynamic probe's fate
 * @what: enum utrace_probe_note (proto.h)
 * @line: the definition
 * @text: the refusal, or where and why a breakpoint
 *
 * Takes the registry lock.  Returns whether a recorder got it (else the
 * caller says it on stderr).
 */
bool utrace__record_probe_note(uint32_t what, const char *line, const char *text) UTRACE_HIDDEN;

/**
 * utrace__record_send_objects - tell the recorder of objects loaded since
 * (dlopen): their files and load biases, for their symbols.  Cheap when
 * nothing was loaded; no-op with no recorder.  Takes the registry lock.
 * Returns whether a recorder is connected.
 */
bool utrace__record_send_objects(void) UTRACE_HIDDEN;

/**
 * utrace__record_queue_fd - the recorder's socket while messages wait
 *
 * The agent polls it for POLLOUT and then calls utrace__record_flush().
 *
 * Return: the socket, or -1 when nothing waits.
 */
int utrace__record_queue_fd(void) UTRACE_HIDDEN;

/**
 * utrace__record_flush - send the messages that wait, never waiting
 * @progress: set to whether any went out
 *
 * A recorder that has taken none of them for 5 s is dropped (one
 * warning; what it never got is counted in the pool for it to report).
 *
 * Return: ms until the recorder is to be looked at again (the deadline),
 * or -1 when nothing waits.
 */
int utrace__record_flush(bool *progress) UTRACE_HIDDEN;

/**
 * utrace__record_after_fork_child - a fork child records into a pool of its own
 *
 * Connects to the recorder of UTRACE_RECORD again, or makes a buffer of
 * its own when the parent's was.
 */
void utrace__record_after_fork_child(void) UTRACE_HIDDEN;

/**
 * utrace__pool_ensure - make this process's pool if it has none
 *
 * In overwrite mode unless UTRACE_MODE says otherwise, as the kernel's
 * trace buffer.
 *
 * Return: 0 or -errno.
 */
int utrace__pool_ensure(void) UTRACE_HIDDEN;

/**
 * utrace__pool_get_mode - the mode of the pool, or of the next one
 *
 * Return: enum utrace_pool_mode.
 */
uint32_t utrace__pool_get_mode(void) UTRACE_HIDDEN;

/**
 * utrace__pool_set_mode - change the pool's mode, and the next pool's
 * @mode: enum utrace_pool_mode
 *
 * Return: @mode, or -EBUSY while a recorder reads the pool (its mode is
 * the recorder's).
 */
int utrace__pool_set_mode(uint32_t mode) UTRACE_HIDDEN;

/**
 * utrace__pool_get_trace_clock - the trace clock of the pool and the next
 *
 * Return: enum utrace_trace_clock.
 */
uint32_t utrace__pool_get_trace_clock(void) UTRACE_HIDDEN;

/**
 * utrace__pool_set_trace_clock - choose the clock readers show
 * @id: enum utrace_trace_clock
 *
 * The pool's events so far are cleared, as the kernel resets its buffer
 * when its clock changes; a pool made later has the clock too.
 *
 * Return: @id, or -EINVAL for a clock this process cannot give (every
 * clock but mono needs the TSC).
 */
int utrace__pool_set_trace_clock(uint32_t id) UTRACE_HIDDEN;

/* The clocks utrace__pool_set_trace_clock() takes: a bit per clock. */
uint32_t utrace__pool_trace_clocks(void) UTRACE_HIDDEN;

/**
 * utrace__pool_calib_timer - the agent's calibration tick
 *
 * Adds the TSC calibration point that is due to this process's pool (so
 * that readers find points even when none reads for a while).
 *
 * Return: milliseconds until the next one is due, or -1 for none.
 */
int utrace__pool_calib_timer(void) UTRACE_HIDDEN;

/**
 * utrace__pool_next_size - the size in bytes of the next pool made
 *
 * Return: the bytes asked for (UTRACE_BUFFER_SIZE or buffer_size_kb).
 */
uint64_t utrace__pool_next_size(void) UTRACE_HIDDEN;

/**
 * utrace__pool_set_next_size - set the size of the next pool
 * @bytes: its size in bytes (a pool that exists keeps its size)
 */
void utrace__pool_set_next_size(uint64_t bytes) UTRACE_HIDDEN;

/**
 * utrace__pool_resize - replace the pool with one of another size
 * @bytes: the new size
 *
 * The events of the old pool are dropped; it is unmapped once no thread
 * can still write into it.
 *
 * Return: 0, -EBUSY while a recorder reads the pool, or -errno.
 */
int utrace__pool_resize(uint64_t bytes) UTRACE_HIDDEN;

/**
 * utrace__record_attach - hand the pool to an attaching `utrace record -p`
 * @path: the recorder's socket
 * @mode: the pool mode while it records (enum utrace_pool_mode)
 *
 * Sends HELLO with the pool (made now if there was none) and every format.
 *
 * Return: the connected socket, or -errno (-EBUSY: a recorder is there).
 */
int utrace__record_attach(const char *path, uint32_t mode) UTRACE_HIDDEN;

/**
 * utrace__record_detach - stop sending to an attached recorder
 * @sock: its socket, from utrace__record_attach(); closed
 * @mode: the pool mode to go back to
 */
void utrace__record_detach(int sock, uint32_t mode) UTRACE_HIDDEN;

/**
 * utrace__send_with_fd - send one packet, with a descriptor if asked
 * @s: the socket
 * @buf: the packet
 * @len: its bytes
 * @pass: a descriptor to pass (SCM_RIGHTS), or -1
 *
 * Retries on EINTR.
 *
 * Return: the bytes sent, or -1 with errno.
 */
ssize_t utrace__send_with_fd(int s, const void *buf, size_t len, int pass) UTRACE_HIDDEN;

#endif /* UTRACE_RUNTIME_RECORD_H */
