// SPDX-License-Identifier: GPL-2.0
/*
 * tidemarkd's report endpoint: each input is sent as raw bytes to the real
 * server (tm_http_start, in this process, so the sanitizers see its
 * handlers and report builders), the write side closed, the answer read.
 */
#include <arpa/inet.h>
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
	if (tm_http_global_init(err, sizeof(err)))
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

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct pollfd p;
	char buf[65536];
	int fd = socket(AF_INET, SOCK_STREAM, 0);

	/* the server must always take a connection */
	if (fd < 0 || connect(fd, (struct sockaddr *)&sa, sizeof(sa))) {
		perror(fd < 0 ? "fuzz_http: socket" : "fuzz_http: connect to the server");
		abort();
	}
	if (size)
		send(fd, data, size, MSG_NOSIGNAL);
	shutdown(fd, SHUT_WR);
	p = (struct pollfd){.fd = fd, .events = POLLIN};
	/* the server answers or closes well within its 2 s request deadline */
	while (poll(&p, 1, 5000) == 1 && recv(fd, buf, sizeof(buf), 0) > 0)
		;
	close(fd);
	return 0;
}
