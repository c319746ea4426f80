/*
 * elf_kind.c - can a program file be interposed by the preload library?
 * sp_elf_kind() tells a dynamically linked x86-64 ELF program (PT_INTERP:
 * ld.so will load LD_PRELOAD) from a statically linked one (no PT_INTERP,
 * static-pie included: nothing loads the library), a 32-bit one, one for
 * another machine, and anything else (a script, unreadable).
 *
 * Also the ELF reading the other parts share: a build ID in notes
 * (sp_build_id_hex()), and whether a range lies in a loaded object's
 * segments before its memory is read (sp_segment_holds(): the lock-library
 * look in locklib.c, the attach's patching in preload/attach.c).
 *
 * Used by 'syncprof run' for the program it starts, and by the preload's
 * execve() (preload.c) for the programs a profiled process starts - which
 * may run in a vfork child: so only system calls (open, read, pread,
 * close) and the caller's stack, no malloc, no stdio.
 *
 * Alternatives considered: libelf (a dependency of the preload already,
 * but it allocates); reading the dynamic section for DT_NEEDED (what
 * matters is whether ld.so runs at all, which PT_INTERP says).
 */
#include <elf.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "base/base.h"

int sp_elf_kind(const char *path, unsigned *machine)
{
	Elf64_Ehdr eh;
	ssize_t n;
	int fd = open(path, O_RDONLY | O_CLOEXEC), kind = SP_ELF_OTHER;

	if (fd < 0)
		return SP_ELF_OTHER;
	memset(&eh, 0, sizeof(eh));
	n = read(fd, &eh, sizeof(eh));
	if (n < (ssize_t)sizeof(eh.e_ident) + 4 || memcmp(eh.e_ident, ELFMAG, SELFMAG)) {
		kind = SP_ELF_OTHER; /* not an ELF file (a script), or too short to tell */
	} else if (eh.e_ident[EI_CLASS] != ELFCLASS64) {
		kind = SP_ELF_32BIT;
	} else if (eh.e_machine != EM_X86_64) {
		kind = SP_ELF_MACHINE;
		if (machine)
			*machine = eh.e_machine;
	} else if (n == (ssize_t)sizeof(eh) && eh.e_phentsize == sizeof(Elf64_Phdr) &&
		   (eh.e_type == ET_EXEC || eh.e_type == ET_DYN)) {
		kind = SP_ELF_STATIC;
		for (unsigned i = 0; i < eh.e_phnum && i < 256; i++) {
			Elf64_Phdr ph;

			if (pread(fd, &ph, sizeof(ph), (off_t)(eh.e_phoff + i * sizeof(ph))) !=
			    (ssize_t)sizeof(ph)) {
				kind = SP_ELF_OTHER;
				break;
			}
			if (ph.p_type == PT_INTERP) {
				kind = SP_ELF_DYNAMIC;
				break;
			}
		}
	}
	close(fd);
	return kind;
}

int sp_build_id_hex(const unsigned char *notes, size_t len, char *hex)
{
	size_t at = 0;

	while (at + sizeof(Elf64_Nhdr) <= len) {
		Elf64_Nhdr h;
		size_t name, desc;

		memcpy(&h, notes + at, sizeof(h)); /* a file's notes may be unaligned */
		name = at + sizeof(h);
		desc = name + ((h.n_namesz + 3) & ~3u);
		if (desc < name || desc > len || h.n_descsz > len - desc)
			return 0;
		if (h.n_type == NT_GNU_BUILD_ID && h.n_namesz == 4 &&
		    !memcmp(notes + name, "GNU", 4) && h.n_descsz && h.n_descsz <= 64) {
			for (unsigned k = 0; k < h.n_descsz; k++)
				snprintf(hex + 2 * k, 3, "%02x", notes[desc + k]);
			return 1;
		}
		at = desc + ((h.n_descsz + 3) & ~3u);
	}
	return 0;
}

int sp_segment_holds(uintptr_t base, const Elf64_Phdr *phdr, int phnum, uintptr_t lo,
		     uintptr_t hi)
{
	for (int i = 0; i < phnum; i++) {
		uintptr_t s = base + phdr[i].p_vaddr;

		if (phdr[i].p_type == PT_LOAD && (phdr[i].p_flags & PF_R) && lo >= s && hi >= lo &&
		    hi <= s + phdr[i].p_memsz)
			return 1;
	}
	return 0;
}
