package org.wanrep.emulator.dbt1;

import java.math.BigDecimal;
import java.time.LocalDate;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Locale;
import java.util.Random;

/**
 * One emulated browser (EB): a TPC-W session and the arguments of its interactions, all drawn
 * from the client's seeded random source. The session holds a customer, a cart id and the items
 * this browser put in the cart; it changes when a transaction is drawn, never from results, so a
 * seed replays the same sequence against any database.
 * <p>
 * Sessions follow DBT-1: a cart belongs to one session; after a buy confirm the next shopping
 * cart or buy request starts a new session (new customer, new cart), and a buy confirm before that
 * orders the same cart again. Cart ids are random in [1, 2^48], chosen here so the database needs
 * no sequence; two browsers drawing the same id share a cart, which every function handles.
 */
final class EmulatedBrowser {
    static final long CART_ID_RANGE = 1L << 48;
    /** Share of buy requests (and registration forms) for a new customer rather than a returning one. */
    static final double NEW_CUSTOMER = 0.2;
    /** Share of shopping-cart interactions that add an item (the rest update quantities). */
    static final double ADD_TO_CART = 0.5;
    /** Share of buy confirms shipping to an address other than the customer's. */
    static final double OTHER_SHIP_ADDRESS = 0.1;

    private static final List<String> SUBJECTS = List.of("ARTS", "BIOGRAPHIES", "BUSINESS", "CHILDREN", "COMPUTERS",
            "COOKING", "HEALTH", "HISTORY", "HOME", "HUMOR", "LITERATURE", "MYSTERY", "NON-FICTION", "PARENTING",
            "POLITICS", "REFERENCE", "RELIGION", "ROMANCE", "SELF-HELP", "SCIENCE-NATURE", "SCIENCE-FICTION", "SPORTS",
            "YOUTH", "TRAVEL");
    private static final List<String> CARD_TYPES = List.of("VISA", "MASTERCARD", "DISCOVER", "AMEX", "DINERS");
    private static final List<String> SHIP_TYPES = List.of("AIR", "UPS", "FEDEX", "SHIP", "COURIER", "MAIL");
    private static final LocalDate FIRST_EXPIRY = LocalDate.of(2025, 1, 1);

    private final Scale scale;
    private int customer;
    private long cart;
    private boolean ordered;
    private final LinkedHashSet<Integer> cartItems = new LinkedHashSet<>();

    EmulatedBrowser(Scale scale, Random r) {
        this.scale = scale;
        customer = drawCustomer(r);
    }

    /** The next transaction of this browser for interaction {@code i}. */
    Dbt1Transaction next(Interaction i, Random r) {
        List<Object> a = switch (i) {
            case HOME -> args(customer, item(r));
            case NEW_PRODUCTS, BEST_SELLERS -> args(subject(r));
            case PRODUCT_DETAIL, SEARCH_REQUEST, ADMIN_REQUEST -> args(item(r));
            case SEARCH_RESULTS -> search(r);
            case SHOPPING_CART -> shoppingCart(r);
            case CUSTOMER_REGISTRATION -> args(r.nextDouble() < NEW_CUSTOMER ? null : customer);
            case BUY_REQUEST -> buyRequest(r);
            case BUY_CONFIRM -> buyConfirm(r);
            case ORDER_INQUIRY -> args(customer);
            case ORDER_DISPLAY -> args(DigSyl.of(customer), DigSyl.of(customer).toLowerCase(Locale.ROOT));
            case ADMIN_CONFIRM -> adminConfirm(r);
        };
        return new Dbt1Transaction(i, a);
    }

    private List<Object> search(Random r) {
        return switch (r.nextInt(3)) {
            case 0 -> args("author", DigSyl.of(1 + r.nextInt(scale.authors())));
            case 1 -> args("title", DigSyl.of(1 + r.nextInt(scale.items())));
            default -> args("subject", subject(r));
        };
    }

    /** Adds an item, or updates the quantities of the cart's items (0 removes one). */
    private List<Object> shoppingCart(Random r) {
        ensureOpenCart(r);
        boolean add = cartItems.isEmpty() || r.nextDouble() < ADD_TO_CART;
        int[] ids = new int[0], qtys = new int[0];
        if (!add) {
            ids = cartItems.stream().mapToInt(Integer::intValue).toArray();
            qtys = new int[ids.length];
            for (int k = 0; k < ids.length; k++) {
                qtys[k] = r.nextInt(4);
                if (qtys[k] == 0) cartItems.remove(ids[k]);
            }
        }
        int item = item(r);
        // the function adds the item when asked to, or when the cart would be left empty
        if (add || cartItems.isEmpty()) cartItems.add(item);
        return args(cart, add, item, ids, qtys);
    }

    private List<Object> buyRequest(Random r) {
        ensureOpenCart(r);
        int item = item(r);
        if (cartItems.isEmpty()) cartItems.add(item);
        if (r.nextDouble() >= NEW_CUSTOMER)
            return args(cart, customer, item, null, null, null, null, null, null, null, null, null, null, null, null, null);
        return args(cart, null, item, astring(r, 8, 15), astring(r, 8, 15), astring(r, 15, 40), astring(r, 15, 40),
                astring(r, 4, 30), astring(r, 2, 20), astring(r, 5, 10), country(r), nstring(r, 9, 16),
                astring(r, 5, 20) + "@example.com", LocalDate.of(1900, 1, 1).plusDays(r.nextInt(40_000)),
                astring(r, 100, 500), BigDecimal.valueOf(r.nextInt(51), 2));
    }

    private List<Object> buyConfirm(Random r) {
        if (cart == 0) newSession(r);   // nothing in the cart yet: the function orders nothing
        ordered = true;
        List<Object> a = args(cart, customer, pick(r, CARD_TYPES), nstring(r, 16, 16), astring(r, 14, 31),
                FIRST_EXPIRY.plusDays(r.nextInt(730)), astring(r, 15, 15), pick(r, SHIP_TYPES), 1 + r.nextInt(7),
                astring(r, 20, 100));
        if (r.nextDouble() < OTHER_SHIP_ADDRESS)
            a.addAll(List.of(astring(r, 15, 40), astring(r, 15, 40), astring(r, 4, 30), astring(r, 2, 20),
                    astring(r, 5, 10), country(r)));
        else a.addAll(Arrays.asList(null, null, null, null, null, null));
        return a;
    }

    private List<Object> adminConfirm(Random r) {
        int item = item(r);
        int version = r.nextInt(1000);
        return args(item, BigDecimal.valueOf(100 + r.nextInt(999_900), 2),
                "img" + item % 100 + "/image_" + item + "_" + version + ".gif",
                "img" + item % 100 + "/thumb_" + item + "_" + version + ".gif");
    }

    /** A new session after an order (DBT-1 starts a new cart then), or the first cart. */
    private void ensureOpenCart(Random r) {
        if (cart == 0 || ordered) newSession(r);
    }

    private void newSession(Random r) {
        customer = drawCustomer(r);
        cart = 1 + r.nextLong(CART_ID_RANGE);
        ordered = false;
        cartItems.clear();
    }

    private int drawCustomer(Random r) { return 1 + r.nextInt(scale.customers()); }

    private int item(Random r) { return 1 + r.nextInt(scale.items()); }

    private static int country(Random r) { return 1 + r.nextInt(Scale.COUNTRIES); }

    private static String subject(Random r) { return pick(r, SUBJECTS); }

    private static String pick(Random r, List<String> values) { return values.get(r.nextInt(values.size())); }

    /** TPC-W a-string: random letters, length in [min, max]. */
    private static String astring(Random r, int min, int max) {
        char[] s = new char[min + r.nextInt(max - min + 1)];
        for (int k = 0; k < s.length; k++) s[k] = (char) ('a' + r.nextInt(26));
        return new String(s);
    }

    /** TPC-W n-string: random digits, length in [min, max]. */
    private static String nstring(Random r, int min, int max) {
        char[] s = new char[min + r.nextInt(max - min + 1)];
        for (int k = 0; k < s.length; k++) s[k] = (char) ('0' + r.nextInt(10));
        return new String(s);
    }

    /** A mutable list that allows nulls (List.of does not). */
    private static List<Object> args(Object... values) { return new ArrayList<>(Arrays.asList(values)); }
}
