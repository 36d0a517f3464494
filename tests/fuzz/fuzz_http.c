// SPDX-License-Identifier: GPL-2.0
/*
 * tidemarkd's report endpoint: each input is sent as raw bytes to the real
 * server (tm_http_start, in this process, so the sanitizers see its
 * handlers and report builders), the write side closed, the answer read.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <poll.h>
#include <stdio.h>
#include <sys/socket.h>
#include <unistd.h>
#include "daemon.h"
#include "fuzz.h"
#include "http.h"
#include "httpc.h"

static struct tm_daemon d = {.cgroup_root = "/nonexistent", .state_dir = "/nonexistent"};
static struct sockaddr_in sa = {.sin_family = AF_INET};

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
	char err[256];

	bool up = false;

	tm_config_defaults(&d.cfg);
	pthread_mutex_init(&d.lock, NULL);
	if (tm_httpc_global_init(err, sizeof(err)))
		abort();
	/* below the ephemeral range (from 32768), where no client's source
	 * port can hold it; another taken one: the next */
	for (int i = 0; i < 64 && !up; i++) {
		d.cfg.report.listen_port = 20000 + (getpid() + i * 997) % 12000;
		up = tm_http_start(&d) != NULL;
	}
	if (!up)
		abort();
	sa.sin_port = htons(d.cfg.report.listen_port);
	sa.sin_addr.s_addr = d.cfg.report.listen_ip;
	return 0;
}

/*
 * A connection to the server, or -1 with errno set. libFuzzer's time-out
 * alarm (SIGALRM, installed without SA_RESTART) interrupts blocking calls:
 * an interrupted connect goes on in the background (twice in about 200000
 * runs a connect returned EINTR and the target aborted), so wait for it.
 */
static int connect_server(void)
{
	int fd = socket(AF_INET, SOCK_STREAM, 0), e = 0;
	struct pollfd p = {.fd = fd, .events = POLLOUT};
	socklen_t len = sizeof(e);

	if (fd < 0)
		return -1;
	if (!connect(fd, (struct sockaddr *)&sa, sizeof(sa)))
		return fd;
	if (errno == EINTR) {
		while (poll(&p, 1, 5000) < 0 && errno == EINTR)
			;
		if (getsockopt(fd, SOL_SOCKET, SO_ERROR, &e, &len))
			e = errno;
		else if (!e && (p.revents & POLLOUT))
			return fd;
		errno = e ? e : ETIMEDOUT;
	}
	e = errno;
	close(fd);
	errno = e;
	return -1;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct pollfd p;
	char buf[65536];
	size_t off = 0;
	ssize_t n;
	int fd = connect_server(), r;

	if (fd < 0) {
		perror("fuzz_http: connect to the server"); /* it must always take one */
		abort();
	}
	while (off < size) {
		n = send(fd, data + off, size - off, MSG_NOSIGNAL);
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			break; /* the server may close first */
		off += n;
	}
	shutdown(fd, SHUT_WR);
	p = (struct pollfd){.fd = fd, .events = POLLIN};
	/* the server answers or closes well within its 2 s request deadline */
	for (;;) {
		r = poll(&p, 1, 5000);
		if (r < 0 && errno == EINTR)
			continue;
		if (r != 1)
			break;
		n = recv(fd, buf, sizeof(buf), 0);
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			break;
	}
	close(fd);
	return 0;
}
