/*
 * Compiled (never run) with a variant's own kernel flags by
 * scripts/bench-sizes: each KFRAG_SIZE() leaves "->name value" in the
 * assembler output, as the kernel's asm-offsets do.
 */
#include <linux/skbuff.h>
#include <net/tcp.h>
#include <linux/sunrpc/xprt.h>

#define KFRAG_SIZE(name, val) \
	asm volatile("\n->" #name " %0" : : "i" ((long)(val)))

void kfrag_sizes(void);
void kfrag_sizes(void)
{
	KFRAG_SIZE(sizeof_skb_frag_t, sizeof(skb_frag_t));
	KFRAG_SIZE(sizeof_skb_shared_info, sizeof(struct skb_shared_info));
	KFRAG_SIZE(sizeof_sk_buff, sizeof(struct sk_buff));
	KFRAG_SIZE(MAX_SKB_FRAGS, MAX_SKB_FRAGS);
	/* the layout (pahole-style offsets) of the fragment and shinfo */
	KFRAG_SIZE(offsetof_frag_page_offset, offsetof(skb_frag_t, page_offset));
	KFRAG_SIZE(offsetof_frag_size, offsetof(skb_frag_t, size));
	KFRAG_SIZE(offsetof_shinfo_dataref, offsetof(struct skb_shared_info, dataref));
	KFRAG_SIZE(offsetof_shinfo_destructor_arg,
		   offsetof(struct skb_shared_info, destructor_arg));
	KFRAG_SIZE(offsetof_shinfo_frags, offsetof(struct skb_shared_info, frags));
	/* the head tcp_sendpage() allocates: sk_stream_alloc_skb(sk, 0) */
	KFRAG_SIZE(tcp_head_data, SKB_DATA_ALIGN(MAX_TCP_HEADER));
	/* v3.1 truesize of that skb once 64 KiB of pages are attached */
	KFRAG_SIZE(truesize_64k_tso_skb,
		   SKB_DATA_ALIGN(MAX_TCP_HEADER) + sizeof(struct sk_buff) + 65536);
	/* what kmalloc() is really asked for its head */
	KFRAG_SIZE(tcp_head_kmalloc,
		   SKB_DATA_ALIGN(MAX_TCP_HEADER) + sizeof(struct skb_shared_info));
	/* a receive buffer for a 1500-byte MTU frame: dev_alloc_skb(1536) */
	KFRAG_SIZE(rx1536_head_kmalloc,
		   SKB_DATA_ALIGN(1536 + NET_SKB_PAD) + sizeof(struct skb_shared_info));
	/*
	 * An NFS write's RPC: the request slot (struct rpc_rqst; v3.1's TCP
	 * transport preallocates two and kzalloc()s every further request
	 * in flight, xprt_dynamic_alloc_slot()) and, on the series, the
	 * records the stack refers to its pages through (struct
	 * skb_frag_owned_page, one per page the data spans, kcalloc()ed per
	 * request by xs_alloc_owned_pages() while it is in flight): here
	 * page-aligned data, as the benchmark's buffers are.
	 */
	KFRAG_SIZE(sizeof_rpc_rqst, sizeof(struct rpc_rqst));
#ifdef SKB_FRAG_OWNED
	KFRAG_SIZE(owned_4k_kmalloc, 1 * sizeof(struct skb_frag_owned_page));
	KFRAG_SIZE(owned_64k_kmalloc, 16 * sizeof(struct skb_frag_owned_page));
	KFRAG_SIZE(owned_1m_kmalloc, 256 * sizeof(struct skb_frag_owned_page));
#else
	KFRAG_SIZE(owned_4k_kmalloc, 0);
	KFRAG_SIZE(owned_64k_kmalloc, 0);
	KFRAG_SIZE(owned_1m_kmalloc, 0);
#endif
}
