"""The native thread pool's lock and fork(): a child forked while another thread holds
the lock that finds or makes the pool must not hang on its first pooled draw.

csrc/cpu/parallel.h registers pthread_atfork handlers that take that lock before fork
and release it on both sides. The C++ program below holds the lock in a thread, forks
from the main thread and lets the child look up its pool under an alarm: without the
handlers the fork happens while the lock is held and the child hangs (killed by the
alarm, so the program fails); with them fork waits for the lock.
"""

import shutil
import subprocess
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]

PROGRAM = r"""
#include <sys/wait.h>
#include <unistd.h>
#include <atomic>
#include <chrono>
#include <cstdio>
#include <thread>
#include "cpu/parallel.h"

using ascend_rand::parallel_detail::Pool;

int main() {
  Pool::get();  // a pool exists, as after a first multi-threaded draw
  std::atomic<bool> held{false};
  std::thread holder([&] {
    std::lock_guard<std::mutex> lock(Pool::create_mutex());
    held = true;
    std::this_thread::sleep_for(std::chrono::milliseconds(300));
  });
  while (!held) std::this_thread::yield();
  const pid_t pid = fork();
  if (pid == 0) {
    alarm(5);     // a hang ends the child with SIGALRM
    Pool::get();  // the child's own pool, under the same lock
    _exit(0);
  }
  int status = 0;
  waitpid(pid, &status, 0);
  holder.join();
  if (WIFSIGNALED(status)) {
    std::printf("child killed by signal %d\n", WTERMSIG(status));
    return 1;
  }
  std::printf("child exited %d\n", WEXITSTATUS(status));
  return WEXITSTATUS(status);
}
"""


def test_fork_while_another_thread_holds_the_pool_lock(tmp_path):
    cxx = shutil.which("g++")
    if cxx is None:
        pytest.skip("no g++")
    src = tmp_path / "pool_fork.cpp"
    src.write_text(PROGRAM)
    exe = tmp_path / "pool_fork"
    build = subprocess.run([cxx, "-std=c++17", "-O1", "-pthread", f"-I{ROOT / 'csrc'}", str(src), "-o", str(exe)],
                           capture_output=True, text=True)
    assert build.returncode == 0, build.stderr[-2000:]
    run = subprocess.run([str(exe)], capture_output=True, text=True, timeout=60)
    assert run.returncode == 0 and run.stdout.strip() == "child exited 0", run.stdout + run.stderr
