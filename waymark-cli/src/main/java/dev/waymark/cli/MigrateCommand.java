package dev.waymark.cli;

import dev.waymark.store.Migrations;
import java.util.LinkedHashMap;
import java.util.Map;
import picocli.CommandLine.Command;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.ParentCommand;
import picocli.CommandLine.Spec;

/** {@code waymark migrate apply|status|sql}. */
@Command(name = "migrate", description = "Apply, inspect or print the schema migrations.", subcommands = {
        MigrateCommand.Apply.class, MigrateCommand.Status.class, MigrateCommand.Sql.class})
final class MigrateCommand {

    @ParentCommand
    WaymarkCli root;

    @Command(name = "apply", description = "Apply pending migrations (creates the schema if needed).")
    static final class Apply implements java.util.concurrent.Callable<Integer> {
        @ParentCommand
        MigrateCommand parent;

        @Spec
        CommandSpec spec;

        @Override
        public Integer call() {
            WaymarkCli cli = parent.root;
            Map<String, Object> result = cli.withStore(store -> {
                int applied = store.migrations().migrate();
                Map<String, Object> r = new LinkedHashMap<>();
                r.put("schema", store.schema());
                r.put("applied", applied);
                r.put("version", store.migrations().currentVersion());
                r.put("versions", store.migrations().versions());
                return r;
            });
            cli.print(spec.commandLine().getOut(), result, "schema " + result.get("schema") + ": applied "
                    + result.get("applied") + " migration(s), now at version " + result.get("version") + "\n");
            return 0;
        }
    }

    @Command(name = "status", description = "Show the applied version of each module and the pending migrations.")
    static final class Status implements java.util.concurrent.Callable<Integer> {
        @ParentCommand
        MigrateCommand parent;

        @Spec
        CommandSpec spec;

        @Override
        public Integer call() {
            WaymarkCli cli = parent.root;
            Map<String, Object> result = cli.withStore(store -> {
                Map<String, Object> r = new LinkedHashMap<>();
                r.put("schema", store.schema());
                r.put("version", store.migrations().currentVersion());
                r.put("versions", store.migrations().versions());
                r.put("pending", store.migrations().pendingCount());
                return r;
            });
            cli.print(spec.commandLine().getOut(), result, "schema " + result.get("schema") + ": version "
                    + (result.get("version").toString().isEmpty() ? "(none)" : result.get("version")) + ", "
                    + result.get("pending") + " pending\n");
            return 0;
        }
    }

    @Command(name = "sql", description = "Print every module's migration SQL for the schema, in order (no database needed);"
            + " with --json, an object with the schema, the scripts (module/script) in order and the SQL.")
    static final class Sql implements java.util.concurrent.Callable<Integer> {
        @ParentCommand
        MigrateCommand parent;

        @Spec
        CommandSpec spec;

        @Override
        public Integer call() {
            WaymarkCli cli = parent.root;
            cli.requireSchema();
            String sql = Migrations.sql(cli.schema);
            Map<String, Object> value = new LinkedHashMap<>();
            value.put("schema", cli.schema);
            value.put("scripts", Migrations.scripts());
            value.put("sql", sql);
            cli.print(spec.commandLine().getOut(), value, sql);
            return 0;
        }
    }
}
