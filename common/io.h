/* I/O helpers shared by the guest programs and the host peers. */
#ifndef KFRAG_IO_H
#define KFRAG_IO_H

#include <errno.h>
#include <stddef.h>
#include <unistd.h>

/* Write all of buf (retrying short writes and EINTR); 0, or -1 on error. */
static inline int kfrag_write_all(int fd, const void *buf, size_t len)
{
	const char *p = buf;

	while (len) {
		ssize_t n = write(fd, p, len);

		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			return -1;
		p += n;
		len -= n;
	}
	return 0;
}

/*
 * Read all of len bytes into buf (retrying short reads and EINTR); 0, or
 * -1 on error (errno) or at EOF (errno 0).
 */
static inline int kfrag_read_all(int fd, void *buf, size_t len)
{
	char *p = buf;

	while (len) {
		ssize_t n;

		errno = 0;
		n = read(fd, p, len);
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			return -1;
		p += n;
		len -= n;
	}
	return 0;
}

#endif
