package dev.waymark.cli;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;
import picocli.CommandLine;

/** Help on every command, and help texts that say what the commands enforce. No database needed. */
class CliHelpTest {

    /** Every command path of the tree, the root's empty path first. */
    private static List<List<String>> commands() {
        List<List<String>> paths = new ArrayList<>();
        walk(new CommandLine(new WaymarkCli()), new ArrayList<>(), paths);
        return paths;
    }

    private static void walk(CommandLine command, List<String> path, List<List<String>> paths) {
        paths.add(List.copyOf(path));
        command.getSubcommands().forEach((name, sub) -> {
            if (sub.getCommandName().equals(name)) { // not an alias
                List<String> next = new ArrayList<>(path);
                next.add(name);
                walk(sub, next, paths);
            }
        });
    }

    @Test
    void every_command_and_subcommand_answers_help_and_h_with_its_usage_and_exit_0() {
        List<List<String>> commands = commands();
        assertThat(commands).as("the tree walked").contains(List.of("streams", "tail"),
                List.of("dead-letters", "replay"), List.of("workflows", "collect"), List.of("migrate", "sql"));
        for (List<String> command : commands) {
            for (String flag : new String[]{"--help", "-h"}) {
                CliRun run = CliRun.of(command, flag);
                String usage = "Usage: " + String.join(" ", concat("waymark", command));
                // before: exit 2 and "Unknown option: '--help'" on every subcommand
                assertThat(run.code()).as(command + " " + flag + ": " + run.err()).isZero();
                assertThat(run.out()).as(command + " " + flag).startsWith(usage);
                assertThat(run.err()).as(command + " " + flag).isEmpty();
            }
        }
    }

    @Test
    void help_ignores_missing_required_options_and_the_database() {
        // the help of a command whose required options are missing, with no URL anywhere
        CliRun run = CliRun.of("shards", "release", "--help");
        assertThat(run.code()).as(run.err()).isZero();
        assertThat(run.out()).contains("--worker").contains("--force");
    }

    @Test
    void streams_tail_limit_help_states_the_range_it_enforces() {
        CommandLine tail = new CommandLine(new WaymarkCli()).getSubcommands().get("streams").getSubcommands()
                .get("tail");
        String limit = String.join(" ", tail.getCommandSpec().findOption("--limit").description());
        // before: "1-10000", though 50000 is taken (a count of events to follow, not a page)
        assertThat(limit).contains("at least 1").doesNotContain("10000");
        assertThat(CliRun.of("streams", "tail", "--limit", "0", "--url", "jdbc:postgresql://127.0.0.1:1/x").code())
                .isEqualTo(2);
        assertThat(CliRun.of("streams", "tail", "--limit", "50000", "--url", "jdbc:postgresql://127.0.0.1:1/x")
                .code()).as("past the check, the unreachable database").isEqualTo(WaymarkCli.UNREACHABLE);
    }

    private static List<String> concat(String first, List<String> rest) {
        List<String> all = new ArrayList<>(List.of(first));
        all.addAll(rest);
        return all;
    }
}
