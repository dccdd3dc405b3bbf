package org.wanrep.emulator.dbt1;

import java.util.ArrayList;
import java.util.List;
import java.util.Set;
import java.util.StringJoiner;

/**
 * The 14 DBT-1 interactions: the PL/pgSQL function each one calls (functions.sql), its parameter
 * types, whether it takes the time as last argument, and the tables it reads and writes.
 * <p>
 * The table sets are what the middleware locks for a call (it cannot see inside a function body),
 * so they must cover everything the body and its helpers touch; {@code Dbt1DatabaseTest} checks
 * them against pg_locks. A function that writes nothing runs as a local query.
 */
public enum Interaction {
    HOME("home", List.of("int", "int"), false,
            Set.of("customer", "item"), Set.of()),
    NEW_PRODUCTS("new_products", List.of("varchar"), false,
            Set.of("item", "author"), Set.of()),
    BEST_SELLERS("best_sellers", List.of("varchar"), false,
            Set.of("orders", "order_line", "item", "author"), Set.of()),
    PRODUCT_DETAIL("product_detail", List.of("int"), false,
            Set.of("item", "author"), Set.of()),
    SEARCH_REQUEST("search_request", List.of("int"), false,
            Set.of("item"), Set.of()),
    SEARCH_RESULTS("search_results", List.of("varchar", "varchar"), false,
            Set.of("item", "author"), Set.of()),
    SHOPPING_CART("shopping_cart", List.of("bigint", "boolean", "int", "int[]", "int[]"), true,
            Set.of("item"), Set.of("shopping_cart", "shopping_cart_line")),
    CUSTOMER_REGISTRATION("customer_registration", List.of("int"), false,
            Set.of(), Set.of()),
    BUY_REQUEST("buy_request", List.of("bigint", "int", "int", "varchar", "varchar", "varchar", "varchar", "varchar",
            "varchar", "varchar", "int", "varchar", "varchar", "date", "varchar", "numeric"), true,
            Set.of("item", "country"), Set.of("customer", "address", "shopping_cart", "shopping_cart_line")),
    BUY_CONFIRM("buy_confirm", List.of("bigint", "int", "varchar", "varchar", "varchar", "date", "varchar", "varchar",
            "int", "varchar", "varchar", "varchar", "varchar", "varchar", "varchar", "int"), true,
            Set.of("shopping_cart", "shopping_cart_line", "customer", "country"),
            Set.of("address", "orders", "order_line", "cc_xacts", "item")),
    ORDER_INQUIRY("order_inquiry", List.of("int"), false,
            Set.of("customer"), Set.of()),
    ORDER_DISPLAY("order_display", List.of("varchar", "varchar"), false,
            Set.of("customer", "orders", "order_line", "item", "cc_xacts", "address", "country"), Set.of()),
    ADMIN_REQUEST("admin_request", List.of("int"), false,
            Set.of("item", "author"), Set.of()),
    ADMIN_CONFIRM("admin_confirm", List.of("int", "numeric", "varchar", "varchar"), true,
            Set.of("orders", "order_line"), Set.of("item"));

    /** The schema the workload is loaded into; table sets name their tables in it. */
    public static final String SCHEMA = "public";

    private final String function;
    private final List<String> parameterTypes;
    private final boolean takesTime;
    private final Set<String> reads;
    private final Set<String> writes;
    private final String callWithNow;

    Interaction(String function, List<String> parameterTypes, boolean takesTime, Set<String> reads, Set<String> writes) {
        this.function = function;
        this.parameterTypes = parameterTypes;
        this.takesTime = takesTime;
        this.reads = reads;
        this.writes = writes;
        this.callWithNow = call("now()");
    }

    /** The transaction type in reports: the function's name. */
    public String type() { return function; }

    public String function() { return function; }

    public List<String> parameterTypes() { return parameterTypes; }

    /** Whether the last argument is the time, written in the call text (now() in real runs). */
    public boolean takesTime() { return takesTime; }

    /** Tables read and not written (unqualified names). */
    public Set<String> reads() { return reads; }

    public Set<String> writes() { return writes; }

    public boolean readOnly() { return writes.isEmpty(); }

    /**
     * The call with a placeholder per argument, typed so overloads and nulls resolve alike
     * everywhere; {@code timeSql} is the time argument's SQL (ignored when the function takes none).
     */
    public String call(String timeSql) {
        StringJoiner args = new StringJoiner(", ", "SELECT * FROM " + function + "(", ")");
        for (String t : parameterTypes) args.add("?::" + t);
        if (takesTime) args.add(timeSql);
        return args.toString();
    }

    /** The call as clients send it: the time is now(), which the middleware fixes to the origin's time. */
    public String callWithNow() { return callWithNow; }

    /** Comma-separated schema-qualified names, the form of {@code functions.NAME.reads/writes}. */
    static String qualified(Set<String> tables) {
        List<String> names = new ArrayList<>();
        for (String t : tables) names.add(SCHEMA + "." + t);
        names.sort(null);
        return String.join(",", names);
    }
}
