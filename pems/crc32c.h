/*
 * crc32c.h - CRC-32C (Castagnoli, reflected polynomial 0x82F63B78), the
 * checksum of spilled blocks (docs/formats.md) and of checkpoint files.
 *
 * Uses the SSE4.2 crc32 instruction, three streams interleaved, when the
 * CPU has it (checked once at run time), else a slice-by-8 table.  Both
 * give identical results; crc32c("123456789") = 0xE3069283.
 */
#ifndef PEMS_CRC32C_H
#define PEMS_CRC32C_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* CRC-32C of @len bytes at @buf, continuing from @crc (0 to start):
 * crc32c(crc32c(0, a, n), b, m) == crc32c(0, a||b, n + m).
 * Thread-safe; never fails. */
uint32_t pems_crc32c(uint32_t crc, const void *buf, size_t len);

/* The same, always with the table code (tests compare the two paths). */
uint32_t pems_crc32c_sw(uint32_t crc, const void *buf, size_t len);

/* True when pems_crc32c() uses the crc32 instruction. */
bool pems_crc32c_hw(void);

#endif
