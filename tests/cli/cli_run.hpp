// Runs the built granula executable (GRANULA_CLI_PATH, defined per test target) as a separate
// process for the CLI tests, and checks the one-line errors every command promises.
#pragma once

#include <gtest/gtest.h>
#include <sys/wait.h>

#include <cstdlib>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "io/io_test_support.hpp"

namespace granula::cli_test {

inline std::string read_text(const std::string& path) {
    std::ifstream in(path, std::ios::binary);
    std::stringstream s;
    s << in.rdbuf();
    return s.str();
}

struct cli_result {
    int status = -1;
    std::string out, err;
};

// stdout and stderr go to files in `dir`.
inline cli_result run_cli(const std::vector<std::string>& args, const io_test::scratch_dir& dir) {
    std::string command;  // single quotes around every word: the tests pass none inside
    command.append("'").append(GRANULA_CLI_PATH).append("'");
    for (const auto& a : args) command.append(" '").append(a).append("'");
    const std::string out = dir.file("stdout.txt"), err = dir.file("stderr.txt");
    command.append(" >'").append(out).append("' 2>'").append(err).append("'");
    const int raw = std::system(command.c_str());
    return {WIFEXITED(raw) ? WEXITSTATUS(raw) : 128 + WTERMSIG(raw), read_text(out), read_text(err)};
}

// One "granula: error:" line on stderr containing `reason`, nothing on stdout, exit `status`.
inline void expect_error(const std::vector<std::string>& args, int status, const std::string& reason) {
    io_test::scratch_dir dir;
    const cli_result r = run_cli(args, dir);
    std::string line = "granula";
    for (const auto& a : args) line += " " + a;
    EXPECT_EQ(r.status, status) << line << "\n" << r.err;
    EXPECT_TRUE(r.out.empty()) << line << "\n" << r.out;
    EXPECT_EQ(r.err.rfind("granula: error: ", 0), 0u) << line << "\n" << r.err;
    EXPECT_EQ(r.err.find('\n'), r.err.size() - 1) << line << "\n" << r.err;
    EXPECT_NE(r.err.find(reason), std::string::npos) << line << "\n" << r.err;
}

}  // namespace granula::cli_test
