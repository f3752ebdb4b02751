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

#endif
